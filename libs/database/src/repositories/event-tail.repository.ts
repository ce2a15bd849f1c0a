import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { asString, computed, selectRows, Selection } from '../schema/table';
import { Db } from '../transaction-runner';
import { EventFilters, matching } from './event-filters.sql';
import { chains, EVENT_RECORD, EventRecord, events } from './event-record';

/** An event's place in a live tail's window: (timestamp, chain, position) order. */
export interface StreamKey {
  time: string;
  chainId: string;
  position: number;
}

/** Where a live tail's reader stands: the snapshots of its window and its last key read from it. */
export interface TailWindow {
  since: string;
  until: string | null;
  after: StreamKey | null;
}

/**
 * A tail key's chain as stored: `''` (a start from a time, apps/api stream-start.ts: before every chain of
 * that millisecond; destinations keep such positions) is the smallest uuid.
 */
const tailChain = (chainId: string): string =>
  chainId === '' ? '00000000-0000-0000-0000-000000000000' : ulidToUuid(chainId);

/** The live tail's order, (timestamp, chain, position): an ORDER BY list, and in parentheses the key it compares. */
const TAIL_ORDER = [events.column('timestamp'), events.column('chainId'), events.column('position')].join(', ');

const SNAPSHOT = computed({ snapshot: ['pg_current_snapshot()::text', asString] });

/** The window's `until` and one event of its page, or none (the page's LEFT JOIN found no event: `id` is null). */
function pageRow(until: string): Selection<{ until: string; event: EventRecord | null }> {
  const head = computed({ until: [`${until}::text`, asString] });
  return {
    sql: `${head.sql}, page.*`,
    decode: (raw) => ({ until: head.decode(raw).until, event: raw.id === null ? null : EVENT_RECORD.decode(raw) }),
  };
}

/** The live tail's reads (GET /v1/events/stream and the stream destinations): what committed between two snapshots. */
@Injectable()
export class EventTailRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** The database's current snapshot (`pg_current_snapshot()`, as text): what a live tail starts from. */
  async currentSnapshot(db: Db = this.pool): Promise<string> {
    const [row] = await selectRows(db, SNAPSHOT, `SELECT ${SNAPSHOT.sql}`);
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
    window: TailWindow,
    limit: number,
    db: Db = this.pool,
  ): Promise<{ until: string; events: EventRecord[] }> {
    const where = matching(accountId, filters);
    const param = (value: unknown): string => `$${where.params.push(value)}`;
    const since = `${param(window.since)}::pg_snapshot`;
    // Without `until`, the statement sees exactly what its own snapshot, pg_current_snapshot(), says is committed.
    const until = window.until === null ? 'pg_current_snapshot()' : `${param(window.until)}::pg_snapshot`;
    // A window's first page finds its events by txid (ix_events_account_txid: what committed since is few, or
    // all of it is read anyway); a page after a key reads ix_events_account_tail (the window's order) from
    // that key and stops at `limit`, the txid bound only a filter
    // (`+ 0`), which keeps the planner from a bitmap scan of the whole window sorted for every page (statistics a burst of appends has not reached yet estimate it small).
    const txid = window.after ? `(${events.column('txid')} + 0)` : events.column('txid');
    let text = `${where.text} AND ${txid} >= pg_snapshot_xmin(${since})::text::int8
                AND NOT pg_visible_in_snapshot(${events.column('txid')}::text::xid8, ${since})`;
    if (window.until !== null) text += ` AND pg_visible_in_snapshot(${events.column('txid')}::text::xid8, ${until})`;
    if (window.after) {
      const { time, chainId, position } = window.after;
      text += ` AND (${TAIL_ORDER}) > (${param(time)}::timestamptz, ${param(tailChain(chainId))}, ${param(position)}::int8)`;
    }
    const page = pageRow(until);
    const rows = await selectRows(
      db,
      page,
      `SELECT ${page.sql}
         FROM (SELECT 1) AS one
         LEFT JOIN LATERAL (SELECT ${EVENT_RECORD.sql} ${text}
                             ORDER BY ${TAIL_ORDER} LIMIT ${param(limit)}) AS page ON true`,
      where.params,
    );
    return { until: rows[0]!.until, events: rows.flatMap((row) => (row.event === null ? [] : [row.event])) };
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
    window: TailWindow,
    chainId: string,
    upTo: number,
    limit: number,
    db: Db,
  ): Promise<number[]> {
    const where = matching(accountId, filters);
    const param = (value: unknown): string => `$${where.params.push(value)}`;
    const [position, txid] = [events.column('position'), events.column('txid')];
    let text = `${where.text} AND ${events.column('chainId')} = ${param(ulidToUuid(chainId))} AND ${position} >= ${chains.column('firstPosition')}
                AND ${position} <= ${param(upTo)} AND ${txid} IS NOT NULL
                AND NOT pg_visible_in_snapshot(${txid}::text::xid8, ${param(window.since)}::pg_snapshot)`;
    if (window.after !== null) {
      const { time, chainId: afterChain, position: afterPosition } = window.after;
      const key = `(${param(time)}::timestamptz, ${param(tailChain(afterChain))}, ${param(afterPosition)}::int8)`;
      // Read from the current window up to `after`; or, before its first read (a start or a replay from a
      // time), nothing up to `after` was ever to be read.
      text +=
        window.until === null
          ? ` AND (${TAIL_ORDER}) > ${key}`
          : ` AND NOT (pg_visible_in_snapshot(${txid}::text::xid8, ${param(window.until)}::pg_snapshot)
                  AND (${TAIL_ORDER}) <= ${key})`;
    }
    const positions = events.select('position');
    const rows = await selectRows(
      db,
      positions,
      `SELECT ${positions.sql} ${text} ORDER BY ${position} LIMIT ${param(limit)}`,
      where.params,
    );
    return rows.map((row) => row.position);
  }
}
