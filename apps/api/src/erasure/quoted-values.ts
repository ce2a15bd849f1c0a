import { parseSearchQuery, SearchTerm } from '@app/common';

/*
 * Which `_audit` entries quote an erased value (docs/contract.md §17, "No quoted residue"). What
 * `_audit` records of a client's words is its selections: an export's `filters` (with its `q`) and a
 * destination's `q`. So the members looked at are the top-level `filters` and `q` of every entry,
 * and a member quotes an erased field's value where it selects by that very field and value:
 * `filters.actor` equal to an erased actor, a `q` term `actor:zoe@example.com`, `actor:zoe*` (a
 * prefix of it), `context.pin:4821` for an erased `context.pin` of 4821 (`4821.0` too: numbers by
 * value), read by the service's own `q` parser, escapes and all; and an erased text of 4 characters
 * or more anywhere in a `q`, not inside a longer word. Nothing else: an entry's other
 * members (a key's name, a hold's reason) are the service's own record, and an event a tenant
 * appends and erases cannot reach them. Pure: unit-tested.
 */

/** One value an erasure removed: the field it was in (`context` with the path inside it) and the value. */
export interface ErasedValue {
  field: 'actor' | 'resource' | 'context';
  /** For `context`: the member, then the path inside it (array indices left out). */
  path: readonly string[];
  value: string | number | boolean | null;
}

/** Each leaf value of an erased field, with where it was. */
export function erasedValuesOf(
  field: 'actor' | 'resource' | 'context',
  path: readonly string[],
  value: unknown,
): ErasedValue[] {
  if (Array.isArray(value)) return value.flatMap((item) => erasedValuesOf(field, path, item));
  if (typeof value === 'object' && value !== null)
    return Object.entries(value).flatMap(([name, member]) => erasedValuesOf(field, [...path, name], member));
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null)
    return [{ field, path, value }];
  return [];
}

/** The members of an `_audit` entry's context that quote one of `erased`. */
export function quotingMembers(context: Record<string, unknown>, erased: readonly ErasedValue[]): string[] {
  const quoting: string[] = [];
  if (Object.hasOwn(context, 'filters') && filtersQuote(context.filters, erased)) quoting.push('filters');
  if (typeof context.q === 'string' && queryQuotes(context.q, erased)) quoting.push('q');
  return quoting;
}

/** An export's recorded filters (`actor`, `resource`, `q`, …) select by an erased value. */
function filtersQuote(filters: unknown, erased: readonly ErasedValue[]): boolean {
  if (typeof filters !== 'object' || filters === null) return false;
  const { actor, resource, q } = filters as Record<string, unknown>;
  return (
    erased.some((e) => e.field === 'actor' && e.value === actor) ||
    erased.some((e) => e.field === 'resource' && e.value === resource) ||
    (typeof q === 'string' && queryQuotes(q, erased))
  );
}

/**
 * A `q` holds an erased text of 4 characters or more anywhere (however it is spelled around it), or
 * has a term, negated or not, that selects by an erased value. A `q` the parser refuses (recorded
 * by an older version, or by hand) quotes whatever string value its text contains.
 */
export function queryQuotes(q: string, erased: readonly ErasedValue[]): boolean {
  if (holdsErasedText(q, erased)) return true;
  let terms: readonly SearchTerm[];
  try {
    terms = parseSearchQuery(q).terms;
  } catch {
    return erased.some((e) => typeof e.value === 'string' && e.value.length > 0 && q.includes(e.value));
  }
  return terms.some((term) => erased.some((e) => termQuotes(term, e)));
}

function termQuotes(term: SearchTerm, erased: ErasedValue): boolean {
  if (term.kind === 'text') {
    if (term.field !== erased.field || typeof erased.value !== 'string') return false;
    return term.prefix ? erased.value.startsWith(term.value) : erased.value === term.value;
  }
  if (term.kind !== 'context' || erased.field !== 'context') return false;
  if (term.path.length !== erased.path.length || term.path.some((segment, i) => segment !== erased.path[i]))
    return false;
  return term.value.kind === 'string'
    ? erased.value === term.value.value
    : (JSON.parse(term.value.json) as unknown) === erased.value;
}

/** Whether `text` holds one of the erased string values (of 4 characters or more, not inside a longer word). */
export function holdsErasedText(text: string, erased: readonly ErasedValue[]): boolean {
  return erased.some(
    ({ value }) =>
      typeof value === 'string' &&
      value.length >= 4 &&
      [...text.matchAll(new RegExp(escapeRegExp(value), 'gu'))].some(
        (m) => !isWordCharacter(text[m.index - 1]) && !isWordCharacter(text[m.index + value.length]),
      ),
  );
}

const WORD = /[\p{L}\p{N}]/u;
const isWordCharacter = (c: string | undefined): boolean => c !== undefined && WORD.test(c);
const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
