import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { SearchTerm } from '@app/common';
import { Db } from '../transaction-runner';
import { ISO_TIMESTAMP, VerifiedEventRow } from './verification-window.queries';
import { EventSnapshot } from './event-snapshot';
import { rollupRange, splitDays } from './event-counts';
import { vacuumTable, VacuumOptions } from './vacuum';

/** The one domain shape of a stored event (with its chain's name), whatever query read it. */
export interface EventRecord {
  id: string;
  accountId: string;
  chainId: string;
  chainName: string;
  position: number;
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
  timestamp: Date;
  previousHash: string;
  hash: string;
}

/** The spec's event filters; bounds are exclusive unless `inclusive` (the export's period). */
export interface EventFilters {
  actor?: string;
  action?: string;
  resource?: string;
  chainId?: string;
  after?: Date;
  before?: Date;
  inclusive?: boolean;
  /** A parsed `q` (docs/contract.md §13): every term must hold. */
  search?: readonly SearchTerm[];
}

/** An event's place in a live tail's window: (timestamp, chain, position) order. */
export interface StreamKey {
  time: string;
  chainId: string;
  position: number;
}

/** A row's place in (timestamp, id) order: what a page cursor holds. */
export interface EventKey {
  time: string;
  id: string;
}

interface Sql {
  text: string;
  params: unknown[];
}

/** int8 arrives as text: every query selects these columns and maps them with toRecord. */
const RECORD_COLUMNS = `e.id, e.account_id, e.chain_id, c.name AS chain_name, e.position, e.actor, e.action, e.resource,
       e.context, e."timestamp", e.previous_hash, e.hash`;

interface EventRow {
  id: string;
  account_id: string;
  chain_id: string;
  chain_name: string;
  position: string | number;
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
  timestamp: Date;
  previous_hash: string;
  hash: string;
}

export function toEventRecord(row: EventRow): EventRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    chainId: row.chain_id,
    chainName: row.chain_name,
    position: Number(row.position),
    actor: row.actor,
    action: row.action,
    resource: row.resource,
    context: row.context,
    timestamp: row.timestamp,
    previousHash: row.previous_hash,
    hash: row.hash,
  };
}

/**
 * The account's events with the spec's filters, chain joined for its name. Every filter has an
 * index ending in (timestamp, id), so pages are index range scans however large the table.
 */
function matching(accountId: string, filters: EventFilters, params: unknown[] = []): Sql {
  const where = [`e.account_id = $${params.push(accountId)}`];
  const add = (condition: (placeholder: string) => string, value: unknown) => {
    params.push(value);
    where.push(condition(`$${params.length}`));
  };
  if (filters.actor !== undefined) add((p) => `e.actor = ${p}`, filters.actor);
  if (filters.action !== undefined) add((p) => `e.action = ${p}`, filters.action);
  if (filters.resource !== undefined) add((p) => `e.resource = ${p}`, filters.resource);
  if (filters.chainId !== undefined) add((p) => `e.chain_id = ${p}`, filters.chainId);
  if (filters.after !== undefined)
    add((p) => `e."timestamp" ${filters.inclusive ? '>=' : '>'} ${p}::timestamptz`, filters.after.toISOString());
  if (filters.before !== undefined)
    add((p) => `e."timestamp" ${filters.inclusive ? '<=' : '<'} ${p}::timestamptz`, filters.before.toISOString());
  for (const term of filters.search ?? []) {
    const [condition, value] = searchCondition(term);
    add((p) => (term.negated ? `(${condition(p)}) IS NOT TRUE` : condition(p)), value);
  }
  return { text: `FROM events e JOIN chains c ON c.id = e.chain_id WHERE ${where.join(' AND ')}`, params };
}

const TEXT_COLUMN = {
  actor: 'e.actor',
  action: 'e.action',
  resource: 'e.resource',
  chain: 'c.name',
  chain_id: 'e.chain_id',
};

/**
 * One term of `q` as a condition on one parameter. A negated term is wrapped in `IS NOT TRUE`, so it
 * holds wherever the positive one does not: where it is false, and where it is null (a null
 * resource, an absent context path). `context.<path>:value` is a containment (`@>`) of the one-path
 * document `{"a":{"b":value}}`: it matches that scalar exactly, never an array holding it, never an
 * absent path, and the GIN index on `context` (jsonb_path_ops) answers it.
 */
function searchCondition(
  term: SearchTerm,
  columns: Partial<typeof TEXT_COLUMN> = TEXT_COLUMN,
): [(p: string) => string, unknown] {
  switch (term.kind) {
    case 'text': {
      const column = columns[term.field]!;
      return term.prefix
        ? [(p) => `starts_with(${column}, ${p})`, term.value]
        : [(p) => `${column} = ${p}`, term.value];
    }
    case 'time':
      return [(p) => `e."timestamp" ${term.comparison} ${p}::timestamptz`, term.at.toISOString()];
    case 'context': {
      const scalar = term.value.kind === 'literal' ? term.value.json : JSON.stringify(term.value.value);
      const document = term.path.reduceRight((inner, key) => `{${JSON.stringify(key)}:${inner}}`, scalar);
      return [(p) => `e.context @> ${p}::jsonb`, document];
    }
  }
}

type CountGroup = 'action' | 'actor' | 'resource' | 'chain' | 'hour' | 'day';

/** What events are counted by: a column, or the UTC hour or day (a `timestamp`) of their time. */
const EVENT_GROUP: Record<CountGroup, string> = {
  action: 'e.action',
  actor: 'e.actor',
  resource: 'e.resource',
  chain: 'e.chain_id',
  hour: `date_trunc('hour', e."timestamp" AT TIME ZONE 'UTC')`,
  day: `date_trunc('day', e."timestamp" AT TIME ZONE 'UTC')`,
};

/** The same for rows of `event_counts` (`r`), which keep no actor, resource or hour. */
const ROLLUP_GROUP: Partial<Record<CountGroup, string>> = {
  action: 'r.action',
  chain: 'r.chain_id',
  day: 'r.day::timestamp',
};

/** The columns of a rollup row that `q`'s text terms read (ROLLUP_TEXT_FIELDS); `c` is joined for `chain`. */
const ROLLUP_TEXT_COLUMN = { action: 'r.action', chain: 'c.name', chain_id: 'r.chain_id' };

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
    `r.account_id = ${param(accountId)}`,
    `r.day BETWEEN ${param(day(from))}::date AND ${param(day(to - 1))}::date`,
  ];
  if (filters.action !== undefined) where.push(`r.action = ${param(filters.action)}`);
  if (filters.chainId !== undefined) where.push(`r.chain_id = ${param(filters.chainId)}`);
  const terms = (filters.search ?? []).filter((term) => term.kind === 'text');
  for (const term of terms) {
    const [condition, value] = searchCondition(term, ROLLUP_TEXT_COLUMN);
    const p = param(value);
    where.push(term.negated ? `(${condition(p)}) IS NOT TRUE` : condition(p));
  }
  const join = terms.some((term) => term.field === 'chain') ? 'JOIN chains c ON c.id = r.chain_id' : '';
  return `SELECT ${ROLLUP_GROUP[group]} AS key, sum(r.count) AS count FROM event_counts r ${join}
           WHERE ${where.join(' AND ')} GROUP BY 1`;
}

/** Every query of the `events` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class EventsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /**
   * After a retention prune: VACUUM (ANALYZE) makes the deleted rows' space reusable by the inserts
   * that follow (and gives back trailing pages), without the exclusive lock of VACUUM FULL that
   * would stop every append; VACUUM FULL rewrites the table with that lock and returns the space.
   */
  async vacuum(options: VacuumOptions): Promise<void> {
    await vacuumTable(this.dataSource, 'events', options);
  }

  /**
   * The table's live rows as ANALYZE estimates them from a sample (pg_class.reltuples): right
   * after a prune, what remains, at the price of a sample whatever the table's size.
   */
  async analyzedRows(): Promise<number> {
    await this.pool.query(`ANALYZE events`);
    const [row] = (await this.pool.query(
      `SELECT reltuples::float8 AS rows FROM pg_class WHERE oid = 'events'::regclass`,
    )) as { rows: number }[];
    return Math.max(0, row?.rows ?? 0);
  }

  /** The table's size with its indexes and TOAST, in bytes (pg_total_relation_size). */
  async storageBytes(): Promise<number> {
    const [row] = (await this.pool.query(`SELECT pg_total_relation_size('events')::float8 AS bytes`)) as {
      bytes: number;
    }[];
    return row?.bytes ?? 0;
  }

  /** One event of the account, as verification reads it; null for an unknown id or another account's. */
  async findForVerification(accountId: string, id: string, db: Db = this.pool): Promise<VerifiedEventRow | null> {
    const [row] = (await db.query(
      `SELECT id, chain_id AS "chainId", position::float8 AS position, actor, action, resource, context,
              ${ISO_TIMESTAMP} AS "timestamp", previous_hash AS "previousHash", hash
         FROM events WHERE id = $1 AND account_id = $2`,
      [id, accountId],
    )) as VerifiedEventRow[];
    return row ?? null;
  }

  /** The hash and timestamp of the account's event at `position` of the chain; null when there is none. */
  async findLinkFacts(
    accountId: string,
    chainId: string,
    position: number,
    db: Db = this.pool,
  ): Promise<{ hash: string; timestamp: string } | null> {
    const [row] = (await db.query(
      `SELECT hash, ${ISO_TIMESTAMP} AS "timestamp" FROM events WHERE account_id = $1 AND chain_id = $2 AND position = $3`,
      [accountId, chainId, position],
    )) as { hash: string; timestamp: string }[];
    return row ?? null;
  }

  /** The stored hash of the event at `position` of the chain, or null when there is none. */
  async findHashAt(chainId: string, position: number, db: Db = this.pool): Promise<string | null> {
    const [row] = (await db.query(`SELECT hash FROM events WHERE chain_id = $1 AND position = $2`, [
      chainId,
      position,
    ])) as { hash: string }[];
    return row?.hash ?? null;
  }

  /** Newest first by (timestamp, id), strictly after `cursor` in that order; at most `limit` rows. */
  async list(
    accountId: string,
    filters: EventFilters,
    limit: number,
    cursor?: EventKey,
    db: Db = this.pool,
  ): Promise<EventRecord[]> {
    const from = matching(accountId, filters);
    if (cursor) {
      from.params.push(cursor.time, cursor.id);
      const n = from.params.length;
      from.text += ` AND (e."timestamp", e.id) < ($${n - 1}::timestamptz, $${n})`;
    }
    from.params.push(limit);
    const rows = (await db.query(
      `SELECT ${RECORD_COLUMNS} ${from.text} ORDER BY e."timestamp" DESC, e.id DESC LIMIT $${from.params.length}`,
      from.params,
    )) as EventRow[];
    return rows.map(toEventRecord);
  }

  /** One event of this account, or null (also for another account's event). */
  async findOwned(accountId: string, id: string, db: Db = this.pool): Promise<EventRecord | null> {
    const [row] = (await db.query(
      `SELECT ${RECORD_COLUMNS} FROM events e JOIN chains c ON c.id = e.chain_id WHERE e.id = $1 AND e.account_id = $2`,
      [id, accountId],
    )) as EventRow[];
    return row ? toEventRecord(row) : null;
  }

  /** All `events` in one statement (`INSERT … SELECT FROM unnest`): one round trip per batch. */
  async insertMany(events: readonly EventRecord[], db: Db = this.pool): Promise<void> {
    await db.query(
      `INSERT INTO events (id, account_id, chain_id, position, actor, action, resource, context, "timestamp", previous_hash, hash)
       SELECT id, account_id, chain_id, position, actor, action, resource, context::jsonb, ts, previous_hash, hash
         FROM unnest($1::varchar[], $2::varchar[], $3::varchar[], $4::int8[], $5::text[], $6::text[], $7::text[],
                     $8::text[], $9::timestamptz[], $10::text[], $11::text[])
           AS e(id, account_id, chain_id, position, actor, action, resource, context, ts, previous_hash, hash)`,
      [
        events.map((e) => e.id),
        events.map((e) => e.accountId),
        events.map((e) => e.chainId),
        events.map((e) => e.position),
        events.map((e) => e.actor),
        events.map((e) => e.action),
        events.map((e) => e.resource),
        events.map((e) => (e.context === null ? null : JSON.stringify(e.context))),
        events.map((e) => e.timestamp.toISOString()),
        events.map((e) => e.previousHash),
        events.map((e) => e.hash),
      ],
    );
  }

  /** The database's current snapshot (`pg_current_snapshot()`, as text): what a live tail starts from. */
  async currentSnapshot(db: Db = this.pool): Promise<string> {
    const [row] = (await db.query(`SELECT pg_current_snapshot()::text AS snapshot`)) as { snapshot: string }[];
    return row!.snapshot;
  }

  /**
   * The account's matching events whose transactions committed between the snapshots `since` and
   * `until`: inserted by a transaction visible in `until` but not in `since`. With `until` null it
   * is the statement's own snapshot (returned): whatever is committed now. However late a
   * transaction commits, it falls between exactly one pair of consecutive snapshots, so a tail that
   * moves `since` to `until` reads each event once. In (timestamp, chain, position) order (within a
   * chain, timestamps never decrease as positions grow), after `after` when given (the rest of a
   * window read in pages), at most `limit` rows.
   */
  async committedBetween(
    accountId: string,
    filters: EventFilters,
    window: { since: string; until: string | null; after: StreamKey | null },
    limit: number,
    db: Db = this.pool,
  ): Promise<{ until: string; events: EventRecord[] }> {
    const where = matching(accountId, filters);
    const param = (value: unknown): string => `$${where.params.push(value)}`;
    const since = `${param(window.since)}::pg_snapshot`;
    // Without `until`, the statement sees exactly what its own snapshot, pg_current_snapshot(), says is committed.
    const until = window.until === null ? 'pg_current_snapshot()' : `${param(window.until)}::pg_snapshot`;
    // A window's first page finds its events by txid (ix_events_account_txid: what committed since is few, or
    // all of it is read anyway); a page after a key reads ix_events_account_tail from that key and stops at
    // `limit`, the txid bound only a filter (`+ 0`), which keeps the planner from a bitmap scan of the whole
    // window sorted for every page (statistics a burst of appends has not reached yet estimate it small).
    const txid = window.after ? '(e.txid + 0)' : 'e.txid';
    let text = `${where.text} AND ${txid} >= pg_snapshot_xmin(${since})::text::int8
                AND NOT pg_visible_in_snapshot(e.txid::text::xid8, ${since})`;
    if (window.until !== null) text += ` AND pg_visible_in_snapshot(e.txid::text::xid8, ${until})`;
    if (window.after) {
      const { time, chainId, position } = window.after;
      text += ` AND (e."timestamp", e.chain_id, e.position) > (${param(time)}::timestamptz, ${param(chainId)}, ${param(position)}::int8)`;
    }
    const rows = (await db.query(
      `SELECT ${until}::text AS until, page.*
         FROM (SELECT 1) AS one
         LEFT JOIN LATERAL (SELECT ${RECORD_COLUMNS} ${text}
                             ORDER BY e."timestamp", e.chain_id, e.position LIMIT ${param(limit)}) AS page ON true`,
      where.params,
    )) as (EventRow & { until: string })[];
    return { until: rows[0]!.until, events: rows.filter((row) => row.id !== null).map(toEventRecord) };
  }

  /**
   * The positions of a chain's matching events from its first retained position to `upTo` (at
   * most `limit`, lowest first) that a reader standing at `window` has not read: neither committed
   * before its `since` nor read from its current window (up to `after`). What a prune of that prefix
   * takes from a stream destination before it delivered it (docs/contract.md §16, `destination.gap`).
   */
  async unreadPositions(
    accountId: string,
    filters: EventFilters,
    window: { since: string; until: string | null; after: StreamKey | null },
    chainId: string,
    upTo: number,
    limit: number,
    db: Db,
  ): Promise<number[]> {
    const where = matching(accountId, filters);
    const param = (value: unknown): string => `$${where.params.push(value)}`;
    let text = `${where.text} AND e.chain_id = ${param(chainId)} AND e.position >= c.first_position
                AND e.position <= ${param(upTo)} AND e.txid IS NOT NULL
                AND NOT pg_visible_in_snapshot(e.txid::text::xid8, ${param(window.since)}::pg_snapshot)`;
    if (window.after !== null) {
      const { time, chainId: afterChain, position } = window.after;
      const key = `(${param(time)}::timestamptz, ${param(afterChain)}, ${param(position)}::int8)`;
      // Read from the current window up to `after`; or, before its first read (a start or a replay from a
      // time), nothing up to `after` was ever to be read.
      text +=
        window.until === null
          ? ` AND (e."timestamp", e.chain_id, e.position) > ${key}`
          : ` AND NOT (pg_visible_in_snapshot(e.txid::text::xid8, ${param(window.until)}::pg_snapshot)
                  AND (e."timestamp", e.chain_id, e.position) <= ${key})`;
    }
    const rows = (await db.query(
      `SELECT e.position::float8 AS position ${text} ORDER BY e.position LIMIT ${param(limit)}`,
      where.params,
    )) as { position: number }[];
    return rows.map((row) => row.position);
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
    const rows = (await db.query(
      `SELECT key, count::int AS count, (sum(count) OVER ())::int8::text AS total
         FROM (${groups}) AS g
        ORDER BY count DESC, key COLLATE "C" ASC NULLS LAST
        LIMIT $${params.length}`,
      params,
    )) as { key: string | null; count: number; total: string }[];
    // No group at all means no matching event.
    const total = rows.length === 0 ? 0 : Number(rows[0]!.total);
    return { data: rows.map(({ key, count }) => ({ key, count })), total };
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
    const rows = (await db.query(
      `WITH counted AS (${groups})
       SELECT to_char(b.bucket, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS key, coalesce(c.count, 0)::int AS count
         FROM generate_series(date_trunc('${unit}', ${after} AT TIME ZONE 'UTC'),
                              date_trunc('${unit}', ${before} AT TIME ZONE 'UTC'), interval '1 ${unit}') AS b(bucket)
         LEFT JOIN counted c ON c.key = b.bucket
        ORDER BY b.bucket`,
      params,
    )) as { key: string; count: number }[];
    return { data: rows, total: rows.reduce((sum, row) => sum + row.count, 0) };
  }

  /**
   * A read-only snapshot of the events matching `filters` (inclusive bounds), oldest first by
   * (timestamp, id) on the (account, timestamp, id) index: count them, then read them through a
   * cursor, both in one REPEATABLE READ transaction on one connection of its own, each statement
   * cancelled past `statementTimeoutMs`.
   */
  async openSnapshot(accountId: string, filters: EventFilters, statementTimeoutMs: number): Promise<EventSnapshot> {
    const from = matching(accountId, { ...filters, inclusive: true });
    return EventSnapshot.open(
      this.dataSource,
      {
        count: (cap) => ({
          text: `SELECT count(*)::int AS n FROM (SELECT 1 ${from.text} LIMIT ${cap}) AS m`,
          params: from.params,
        }),
        rows: { text: `SELECT ${RECORD_COLUMNS} ${from.text} ORDER BY e."timestamp", e.id`, params: from.params },
        toRecord: toEventRecord,
      },
      statementTimeoutMs,
    );
  }
}
