/*
 * Which `_audit` entries quote an erased value (docs/contract.md §17, "No quoted residue"): an
 * export's recorded filters or `q`, a destination's `q` — each top-level context member of an
 * account's `_audit` entries whose value holds an erased value is erased with it. Pure: unit-tested.
 */

/** Values shorter than this are found inside a longer text only where a query term quotes them (`…:4821`). */
const SHORT = 4;

/** What an erased field held, as text: each string and number inside it (not booleans, nulls or member names). */
export function valuesOf(value: unknown): string[] {
  if (typeof value === 'string') return value.length > 0 ? [value] : [];
  if (typeof value === 'number') return [JSON.stringify(value)];
  if (Array.isArray(value)) return value.flatMap(valuesOf);
  if (typeof value === 'object' && value !== null) return Object.values(value).flatMap(valuesOf);
  return [];
}

/** The text to look for in a jsonb value's text form (strings are escaped there as JSON escapes them). */
export function needleOf(value: string): string {
  return JSON.stringify(value).slice(1, -1);
}

/** The members of `context` whose value quotes one of `erased`, in member order. */
export function quotingMembers(context: Record<string, unknown>, erased: readonly string[]): string[] {
  return Object.keys(context).filter((member) =>
    valuesOf(context[member]).some((text) => erased.some((value) => quotes(text, value))),
  );
}

/**
 * Whether `text` holds `value`: as the whole text; or, for a value of at least SHORT characters,
 * anywhere it is not part of a longer word (`zoe@example.com` in `actor:zoe@example.com`, not
 * `4821` in `148210`); or, for a shorter one, as a query term's value (`context.pin:12`, not the
 * `12` of a date).
 */
export function quotes(text: string, value: string): boolean {
  if (text === value) return true;
  for (let at = text.indexOf(value); at !== -1; at = text.indexOf(value, at + 1)) {
    const before = text[at - 1];
    const after = text[at + value.length];
    const bounded = !isWordCharacter(before) && !isWordCharacter(after);
    if (value.length >= SHORT ? bounded : bounded && isTermStart(before) && isTermEnd(after)) return true;
  }
  return false;
}

const WORD = /[\p{L}\p{N}]/u;
const isWordCharacter = (c: string | undefined): boolean => c !== undefined && WORD.test(c);
/** Where a query term's value starts: after `field:` or an opening quote. */
const isTermStart = (c: string | undefined): boolean => c === ':' || c === '"' || c === '=';
const isTermEnd = (c: string | undefined): boolean => c === undefined || c === '"' || c === ')' || /\s/.test(c);
