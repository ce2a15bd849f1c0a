import { ulidToUuid, ulidToUuidOrNull, uuidToUlid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EventCountEntity } from '../entities/event-count.entity';
import { asNumber, asString, computed, orNull, selectRows, Table } from '../schema/table';
import { Db } from '../transaction-runner';
import { rollupRange, ROLLUP_TEXT_FIELDS, splitDays } from './event-counts';
import { EventFilters, matching, searchCondition } from './event-filters.sql';
import { chains, events } from './event-record';

const rollups = new Table(EventCountEntity, 'r');

type CountGroup = 'action' | 'actor' | 'resource' | 'chain' | 'hour' | 'day';

/** What events are counted by: a column, or the UTC hour or day (a `timestamp`) of their time. */
const EVENT_GROUP: Record<CountGroup, string> = {
  action: events.column('action'),
  actor: events.column('actor'),
  resource: events.column('resource'),
  chain: events.column('chainId'),
  hour: `date_trunc('hour', ${events.column('timestamp')} AT TIME ZONE 'UTC')`,
  day: `date_trunc('day', ${events.column('timestamp')} AT TIME ZONE 'UTC')`,
};

/** The same for rows of `event_counts` (`r`), which keep no actor, resource or hour. */
const ROLLUP_GROUP: Partial<Record<CountGroup, string>> = {
  action: rollups.column('action'),
  chain: rollups.column('chainId'),
  day: `${rollups.column('day')}::timestamp`,
};

/** The columns of a rollup row that `q`'s text terms read (ROLLUP_TEXT_FIELDS); `c` is joined for `chain`. */
const ROLLUP_TEXT_COLUMN: Record<(typeof ROLLUP_TEXT_FIELDS)[number], string> = {
  action: rollups.column('action'),
  chain: chains.column('name'),
  chain_id: rollups.column('chainId'),
};

/**
 * The matching events counted by `group`, as rows (key, count), unordered; `count` is a bigint
 * or numeric. When the group and filters allow it (by action, chain or day; rollupRange: an
 * inclusive period, and nothing else but chain and action) and the period holds whole UTC days,
 * those are read from `event_counts` and only the parts of a day before and after them from the
 * events (two index ranges of under a day); otherwise the events alone. Either way the same
 * groups and counts, a group only where there is an event.
 */
function counted(accountId: string, filters: EventFilters, group: CountGroup, params: unknown[]): string {
  const fromEvents = (range: EventFilters) =>
    `SELECT ${EVENT_GROUP[group]} AS key, count(*) AS count ${matching(accountId, range, params).text} GROUP BY 1`;
  const range = ROLLUP_GROUP[group] === undefined ? null : rollupRange(filters);
  const parts = range === null ? [] : splitDays(range);
  if (!parts.some((part) => part.rollup)) return fromEvents(filters);
  const queries = parts.map(({ rollup, from, to }) =>
    rollup
      ? fromRollup(accountId, filters, group, { from, to }, params)
      : fromEvents({ ...filters, after: new Date(from), before: new Date(to - 1), inclusive: true }),
  );
  return `SELECT key, sum(count) AS count FROM (${queries.join(' UNION ALL ')}) AS parts GROUP BY key`;
}

/** The rows of `event_counts` for the whole days [from, to) that match the filters (rollupRange allowed them), counted by `group`. */
function fromRollup(
  accountId: string,
  filters: EventFilters,
  group: CountGroup,
  { from, to }: { from: number; to: number },
  params: unknown[],
): string {
  const param = (value: unknown) => `$${params.push(value)}`;
  // First and last day (`to` is the midnight after the last, year 10000 after 9999-12-31).
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  const where = [
    `${rollups.column('accountId')} = ${param(ulidToUuid(accountId))}`,
    `${rollups.column('day')} BETWEEN ${param(day(from))}::date AND ${param(day(to - 1))}::date`,
  ];
  if (filters.action !== undefined) where.push(`${rollups.column('action')} = ${param(filters.action)}`);
  if (filters.chainId !== undefined)
    where.push(`${rollups.column('chainId')} = ${param(ulidToUuidOrNull(filters.chainId, 'chn'))}`);
  const terms = (filters.search ?? []).filter((term) => term.kind === 'text');
  for (const term of terms) {
    const [condition, value] = searchCondition(term, ROLLUP_TEXT_COLUMN);
    const p = param(value);
    where.push(term.negated ? `(${condition(p)}) IS NOT TRUE` : condition(p));
  }
  const join = terms.some((term) => term.field === 'chain')
    ? `JOIN chains c ON ${chains.column('id')} = ${rollups.column('chainId')}`
    : '';
  return `SELECT ${ROLLUP_GROUP[group]} AS key, sum(${rollups.column('count')}) AS count FROM event_counts r ${join}
           WHERE ${where.join(' AND ')} GROUP BY 1`;
}

/** A group of countBy and the total over every group (the same on each row). */
const GROUP_COUNT = computed({
  key: ['key', orNull(asString)],
  count: ['count::int', asNumber],
  total: ['(sum(count) OVER ())::int8::text', asNumber],
});

/** A bucket of countByTime: its start, as the API writes a time, and its count (0 where no group is). */
const BUCKET_COUNT = computed({
  key: [`to_char(b.bucket, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`, asString],
  count: ['coalesce(c.count, 0)::int', asNumber],
});

/** GET /v1/stats: the matching events counted, from the daily rollup where it answers and the events otherwise. */
@Injectable()
export class EventStatisticsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /**
   * The matching events counted by a column (`chain`: the chain id), largest counts first, ties by
   * key in code point order with the null group last; `total` counts every matching event.
   */
  async countBy(
    accountId: string,
    filters: EventFilters,
    group: 'action' | 'actor' | 'resource' | 'chain',
    limit: number,
    db: Db = this.pool,
  ): Promise<{ data: { key: string | null; count: number }[]; total: number }> {
    const params: unknown[] = [];
    const groups = counted(accountId, filters, group, params);
    params.push(limit);
    const rows = await selectRows(
      db,
      GROUP_COUNT,
      `SELECT ${GROUP_COUNT.sql}
         FROM (${groups}) AS g
        ORDER BY count DESC, key::text COLLATE "C" ASC NULLS LAST
        LIMIT $${params.length}`,
      params,
    );
    // No group at all means no matching event.
    const total = rows.length === 0 ? 0 : rows[0]!.total;
    // A chain's id is stored as a uuid (whose text sorts as the id's): written as the API writes it.
    const shown = (key: string | null) => (group === 'chain' && key !== null ? uuidToUlid('chn', key) : key);
    return { data: rows.map(({ key, count }) => ({ key: shown(key), count })), total };
  }

  /** The matching events counted by UTC hour or day over the (inclusive) period, every bucket present, oldest first. */
  async countByTime(
    accountId: string,
    filters: EventFilters & { after: Date; before: Date },
    unit: 'hour' | 'day',
    db: Db = this.pool,
  ): Promise<{ data: { key: string; count: number }[]; total: number }> {
    const params: unknown[] = [];
    const groups = counted(accountId, filters, unit, params);
    params.push(filters.after.toISOString(), filters.before.toISOString());
    const [after, before] = [`$${params.length - 1}::timestamptz`, `$${params.length}::timestamptz`];
    const rows = await selectRows(
      db,
      BUCKET_COUNT,
      `WITH counted AS (${groups})
       SELECT ${BUCKET_COUNT.sql}
         FROM generate_series(date_trunc('${unit}', ${after} AT TIME ZONE 'UTC'),
                              date_trunc('${unit}', ${before} AT TIME ZONE 'UTC'), interval '1 ${unit}') AS b(bucket)
         LEFT JOIN counted c ON c.key = b.bucket
        ORDER BY b.bucket`,
      params,
    );
    return { data: rows, total: rows.reduce((sum, row) => sum + row.count, 0) };
  }
}
