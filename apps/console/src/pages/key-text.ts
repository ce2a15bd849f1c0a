/*
 * The Keys page in words (docs/contract.md §12): how long a rotated key keeps working, and what a
 * person typed as that overlap. Pure functions, unit-tested beside this file.
 */

/** A rotation's overlap in seconds, as `POST …/keys/:keyId/rotate` takes it (docs/contract.md §12). */
export const OVERLAP = { min: 0, max: 86_400, default: 3_600 } as const;

/** The overlap typed in the field: whole seconds within `OVERLAP`, else `null`. */
export function parseOverlap(text: string): number | null {
  if (!/^\d{1,6}$/.test(text.trim())) return null;
  const seconds = Number(text.trim());
  return seconds >= OVERLAP.min && seconds <= OVERLAP.max ? seconds : null;
}

/** Seconds as a person reads them: `at once`, `1 hour`, `1 hour 30 minutes`, `45 seconds`. */
export function durationText(seconds: number): string {
  if (seconds <= 0) return 'at once';
  const parts: [number, string][] = [
    [Math.floor(seconds / 3600), 'hour'],
    [Math.floor((seconds % 3600) / 60), 'minute'],
    [seconds % 60, 'second'],
  ];
  return parts
    .filter(([n]) => n > 0)
    .map(([n, unit]) => `${n} ${unit}${n === 1 ? '' : 's'}`)
    .join(' ');
}

/** When an old key stops if rotated at `from`: the service keeps its own expiry when that is sooner. */
export function stopsAt(seconds: number, from: Date, expiresAt: string | null): Date {
  const after = from.getTime() + seconds * 1000;
  return new Date(expiresAt === null ? after : Math.min(after, Date.parse(expiresAt)));
}

/** What a rotation at `now` with this overlap does to the old key: the sentence the confirmation shows. */
export function overlapText(seconds: number, now: Date, expiresAt: string | null): string {
  const until = stopsAt(seconds, now, expiresAt);
  if (until.getTime() <= now.getTime()) return 'The old key is refused at once (within 5 seconds on every instance).';
  if (until.getTime() < now.getTime() + seconds * 1000)
    return `The old key keeps working until ${until.toISOString()}, when it expires anyway, then it is refused.`;
  return `The old key keeps working for ${durationText(seconds)}, until ${until.toISOString()}, then it is refused.`;
}

/** What became of the old key, said after a rotation made its successor at `madeAt`. */
export function oldKeyText(prefix: string, until: Date, madeAt: Date): string {
  return until.getTime() <= madeAt.getTime()
    ? `The old key (prefix ${prefix}) is refused within 5 seconds.`
    : `The old key (prefix ${prefix}) keeps working until ${until.toISOString()}, then it is refused.`;
}
