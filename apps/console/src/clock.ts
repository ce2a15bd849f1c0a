import { useEffect, useState } from 'preact/hooks';

/*
 * One clock for the whole console (issue 40 item 1): every time shown and every time typed is in one
 * zone, UTC unless the person switches to the browser's own zone, and each says which. The API speaks
 * ISO 8601 UTC; only what a person reads and types changes.
 */
export type Zone = 'utc' | 'local';

/** Remembered in this browser once switched (a preference, not a secret: the key never goes there). */
const STORED = 'audit-console-zone';
const listeners = new Set<() => void>();

function stored(): Zone {
  try {
    return localStorage.getItem(STORED) === 'local' ? 'local' : 'utc';
  } catch {
    return 'utc';
  }
}

let current: Zone = stored();

export function zone(): Zone {
  return current;
}

export function setZone(next: Zone): void {
  current = next;
  try {
    if (next === 'utc') localStorage.removeItem(STORED);
    else localStorage.setItem(STORED, next);
  } catch {
    // storage refused: the switch holds for this page
  }
  listeners.forEach((l) => l());
}

/** The zone, re-rendering its user when it is switched. */
export function useZone(): Zone {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((n) => n + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return current;
}

/** The browser's own zone by name (`America/Los_Angeles`). */
export function localZoneName(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'local time';
}

/** The browser's zone as it is called now, short: `PST`, `CET`, `GMT+2`. */
export function localZoneAbbreviation(): string {
  return suffix(new Date(), 'local');
}

/** What a field or a column says its times are in: `UTC`, or `local, America/Los_Angeles`. */
export function zoneLabel(z: Zone = current): string {
  return z === 'utc' ? 'UTC' : `local, ${localZoneName()}`;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The date and time parts of an instant in the zone. */
function parts(date: Date, z: Zone) {
  return z === 'utc'
    ? {
        y: date.getUTCFullYear(),
        mo: date.getUTCMonth() + 1,
        d: date.getUTCDate(),
        h: date.getUTCHours(),
        mi: date.getUTCMinutes(),
        s: date.getUTCSeconds(),
        ms: date.getUTCMilliseconds(),
      }
    : {
        y: date.getFullYear(),
        mo: date.getMonth() + 1,
        d: date.getDate(),
        h: date.getHours(),
        mi: date.getMinutes(),
        s: date.getSeconds(),
        ms: date.getMilliseconds(),
      };
}

/** The short name of the zone at that instant: `UTC`, `PST`, `GMT+2`. */
function suffix(date: Date, z: Zone): string {
  if (z === 'utc') return 'UTC';
  const name = new Intl.DateTimeFormat('en-US', { timeZoneName: 'short' })
    .formatToParts(date)
    .find((p) => p.type === 'timeZoneName');
  return name?.value ?? 'local';
}

/**
 * An instant as a person reads it, in the zone, to the second and with the zone's name:
 * `2026-12-07 18:04:40 UTC`, `2026-12-07 10:04:40 PST`; milliseconds with `precise`. Not a date: as given.
 */
export function formatInstant(iso: string, z: Zone = current, precise = false): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const p = parts(date, z);
  const ms = precise ? `.${pad(p.ms, 3)}` : '';
  return `${p.y}-${pad(p.mo)}-${pad(p.d)} ${pad(p.h)}:${pad(p.mi)}:${pad(p.s)}${ms} ${suffix(date, z)}`;
}

/** A `datetime-local` field's value for an instant, in the zone (empty when there is none). */
export function toField(iso: string | null | undefined, z: Zone = current): string {
  if (!iso) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const p = parts(date, z);
  const seconds = p.s === 0 ? '' : `:${pad(p.s)}`;
  return `${p.y}-${pad(p.mo)}-${pad(p.d)}T${pad(p.h)}:${pad(p.mi)}${seconds}`;
}

/** The instant a `datetime-local` value names in the zone, as ISO 8601 UTC; undefined when empty or not a time. */
export function fromField(value: string, z: Zone = current): string | undefined {
  if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?$/.test(value)) return undefined;
  const date = new Date(z === 'utc' ? `${value}Z` : value);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** How long ago, in words: `just now`, `12 s ago`, `4 min ago`, `3 h ago`, `2 days ago`. */
export function ageText(iso: string, now = Date.now()): string {
  const seconds = Math.max(0, Math.floor((now - Date.parse(iso)) / 1000));
  if (seconds < 5) return 'just now';
  if (seconds < 60) return `${seconds} s ago`;
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  const days = Math.floor(seconds / 86_400);
  return days === 1 ? '1 day ago' : `${days} days ago`;
}
