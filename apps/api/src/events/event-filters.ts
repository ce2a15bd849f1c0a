import { instantMillis, instantMillisUp, parseSearchQuery } from '@app/common';
import { EventFilters } from '@app/database';

/** What every reader of events takes: the list's exact filters and `q`, and `after`/`before`. */
interface FilterQuery {
  actor?: string;
  action?: string;
  resource?: string;
  chain_id?: string;
  q?: string;
  after?: string;
  before?: string;
}

/**
 * The validated filters of a request as the events repositories take them: `after` and `before`
 * exclusive (the list, the stream), or an inclusive `period` already normalized by exportPeriod
 * (the export, statistics), which then replaces them.
 */
export function toEventFilters(query: FilterQuery, period?: { after: Date; before: Date }): EventFilters {
  // To the stored millisecond that keeps the same events: `after` (>) down, `before` (<) up.
  const instant = (text: string | undefined, read: (text: string) => number | null) =>
    text === undefined ? undefined : new Date(read(text)!);
  return {
    actor: query.actor,
    action: query.action,
    resource: query.resource,
    chainId: query.chain_id,
    search: query.q === undefined ? undefined : parseSearchQuery(query.q).terms,
    ...(period
      ? { ...period, inclusive: true }
      : { after: instant(query.after, instantMillis), before: instant(query.before, instantMillisUp) }),
  };
}
