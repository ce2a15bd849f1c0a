import type { TimeComparison } from '@app/common';
import type { EventFilters } from './event-filters.sql';

const DAY_MS = 86_400_000;

/** What a rollup row keeps of its events that `q` can name: the text fields it answers exactly. */
export const ROLLUP_TEXT_FIELDS = ['action', 'chain', 'chain_id'] as const;

/** A half-open interval of milliseconds since the epoch. */
export interface MillisRange {
  from: number;
  to: number;
}

/** A part of a range and where it is counted: whole UTC days in `event_counts` (`rollup`), or the events. */
export interface CountedPart extends MillisRange {
  rollup: boolean;
}

const NEGATED: Record<TimeComparison, TimeComparison> = { '>=': '<', '>': '<=', '<=': '>', '<': '>=' };

/**
 * The time range the rollup may count `filters` over, or null when a filter reads what a rollup
 * row does not keep (actor, resource, context). Needs an inclusive period (statistics'); `q`'s
 * time terms narrow it (stored timestamps have milliseconds, and are never null, so a negated
 * term is the opposite comparison), its action, chain and chain_id terms are answered by the
 * rows' own columns. An empty range comes back with `from` = `to`.
 */
export function rollupRange(filters: EventFilters): MillisRange | null {
  if (filters.after === undefined || filters.before === undefined || !filters.inclusive) return null;
  if (filters.actor !== undefined || filters.resource !== undefined) return null;
  let from = filters.after.getTime();
  let to = filters.before.getTime() + 1;
  for (const term of filters.search ?? []) {
    if (term.kind === 'context' || term.kind === 'schema') return null;
    if (term.kind === 'text') {
      if (!(ROLLUP_TEXT_FIELDS as readonly string[]).includes(term.field)) return null;
      continue;
    }
    const at = term.at.getTime();
    const comparison = term.negated ? NEGATED[term.comparison] : term.comparison;
    if (comparison === '>=') from = Math.max(from, at);
    else if (comparison === '>') from = Math.max(from, at + 1);
    else if (comparison === '<=') to = Math.min(to, at + 1);
    else to = Math.min(to, at);
  }
  return { from, to: Math.max(from, to) };
}

/**
 * `range` cut into the whole UTC days inside it, counted from the rollup, and the parts of a day
 * before and after them, counted from the events; in time order, empty parts left out. A range
 * that holds no whole day is one part for the events.
 */
export function splitDays(range: MillisRange): CountedPart[] {
  const start = Math.ceil(range.from / DAY_MS) * DAY_MS;
  const end = Math.floor(range.to / DAY_MS) * DAY_MS;
  const parts =
    start < end
      ? [
          { rollup: false, from: range.from, to: start },
          { rollup: true, from: start, to: end },
          { rollup: false, from: end, to: range.to },
        ]
      : [{ rollup: false, ...range }];
  return parts.filter((part) => part.from < part.to);
}
