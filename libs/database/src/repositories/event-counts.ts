import type { TimeComparison } from '@app/common';
import type { EventFilters } from './events.repository';

/** The levels of `event_counts` (migration 1764900000000), coarsest first. */
export type CountUnit = 'day' | 'hour';
export const COUNT_UNITS: readonly CountUnit[] = ['day', 'hour'];
const UNIT_MS: Record<CountUnit, number> = { day: 86_400_000, hour: 3_600_000 };

/** What a rollup row keeps of its events that `q` can name: the text fields it answers exactly. */
export const ROLLUP_TEXT_FIELDS = ['action', 'chain', 'chain_id'] as const;

/** A half-open interval of milliseconds since the epoch. */
export interface MillisRange {
  from: number;
  to: number;
}

/** A part of a range and where it is counted: whole buckets of a `unit` in `event_counts`, or the events (null). */
export interface CountedPart extends MillisRange {
  unit: CountUnit | null;
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
    if (term.kind === 'context') return null;
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
 * `range` cut into the whole UTC buckets of the first unit that fit in it, then what is left on
 * either side likewise with the next units, the rest for the events: a month's period is its whole
 * days, the whole hours around them, and the milliseconds before and after those. In time order.
 */
export function splitRange(range: MillisRange, units: readonly CountUnit[]): CountedPart[] {
  if (range.from >= range.to) return [];
  const [unit, ...finer] = units;
  if (unit === undefined) return [{ unit: null, ...range }];
  const size = UNIT_MS[unit];
  const start = Math.ceil(range.from / size) * size;
  const end = Math.floor(range.to / size) * size;
  if (start >= end) return splitRange(range, finer);
  return [
    ...splitRange({ from: range.from, to: start }, finer),
    { unit, from: start, to: end },
    ...splitRange({ from: end, to: range.to }, finer),
  ];
}
