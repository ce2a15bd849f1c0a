import { ulidToUuid } from '@app/common/ids';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource, QueryRunner } from 'typeorm';
import type { ExportedPrunedChain } from '@app/verification';
import { asNumber, asString, computed, Decoder, joined, orNull, selectRows } from '../schema/table';
import { assertReplayed, ReadReplica } from '../read-replica';
import { beginBounded, releaseRunner } from '../transaction-runner';
import { EventFilters, matching, Sql } from './event-filters.sql';
import { chains, EVENT_RECORD, EventRecord, events } from './event-record';
import { merkleNodeAt } from './merkle-nodes.repository';

const CURSOR = 'export_rows';

/** A pg array (int, float8 and text arrays arrive parsed), each element decoded. */
function arrayOf<T>(decode: Decoder<T>): Decoder<T[]> {
  return (raw) => {
    if (!Array.isArray(raw)) throw new Error(`expected an array from the database, got ${typeof raw}`);
    return raw.map((element: unknown) => decode(element));
  };
}

/**
 * A pruned chain as the export's header states it: the last pruned event (position, hash, time;
 * not null past a prune, ck_chains_pruned) and the kept Merkle nodes, level by level (`n`, null: none).
 */
const PRUNED_CHAIN = joined(
  chains.selectAs({ chainId: 'id' }),
  computed({
    lastPosition: [`(${chains.column('firstPosition')} - 1)::float8`, asNumber],
    lastHash: [`encode(${chains.column('prunedHash')}, 'hex')`, asString],
    lastTimestamp: [
      `to_char(${chains.column('prunedTimestamp')} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
      asString,
    ],
    levels: ['n.levels', orNull(arrayOf(asNumber))],
    indexes: ['n.indexes', orNull(arrayOf(asNumber))],
    hashes: ['n.hashes', orNull(arrayOf(asString))],
  }),
);

const COUNT = computed({ n: ['count(*)::int', asNumber] });

/** What a version-2 event's `hashing` is made of: its personal fields (which hold a value) and its secrets. */
const SECRETS = events.select('id', 'actor', 'resource', 'context', 'saltSeed', 'erasure');
export type EventSecretsRecord = ReturnType<typeof SECRETS.decode>;

/**
 * One connection holding one REPEATABLE READ, READ ONLY transaction: what is counted is exactly
 * what the cursor then returns. Holds no other connection (the embedded pool has only one).
 * `close()` is idempotent and always returns the connection, ending the transaction first.
 * Each statement (the count, the pruned chains, each FETCH of the cursor) is cancelled by
 * PostgreSQL past `statementTimeoutMs` (57014): the count, which reads as far as the whole file
 * will, before any byte is sent; a FETCH past it cuts the file being sent.
 */
export class EventSnapshot {
  private static readonly logger = new Logger('Export');
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly runner: QueryRunner,
    /** The matching events: FROM and WHERE (`matching`, inclusive bounds). */
    private readonly from: Sql,
  ) {}

  /**
   * On a replica (`floor` given, ReadReplica.open), the snapshot is taken by the check that the
   * replica has replayed up to `floor`: it holds everything the primary had when the export began.
   */
  static async open(
    dataSource: DataSource,
    from: Sql,
    statementTimeoutMs: number,
    floor: string | null,
  ): Promise<EventSnapshot> {
    const runner = dataSource.createQueryRunner();
    try {
      await runner.connect();
      await beginBounded(runner, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', statementTimeoutMs);
    } catch (error) {
      await runner.release();
      throw error;
    }
    const snapshot = new EventSnapshot(runner, from);
    try {
      if (floor !== null) await assertReplayed(runner.manager, floor);
    } catch (error) {
      await snapshot.close();
      throw error;
    }
    return snapshot;
  }

  /**
   * The account's pruned chains (docs/contract.md §14; only `chainId` when given) as of the snapshot: the
   * last pruned event's position, hash and time, and the kept Merkle nodes over the positions
   * before it (`frontierIds(lastPosition − 1)`, left to right), for the export's header.
   */
  async pruned(accountId: string, chainId: string | null): Promise<ExportedPrunedChain[]> {
    const first = chains.column('firstPosition');
    const rows = await selectRows(
      this.runner.manager,
      PRUNED_CHAIN,
      `SELECT ${PRUNED_CHAIN.sql}
         FROM chains c CROSS JOIN LATERAL (
           SELECT array_agg(w.level ORDER BY w.level DESC) AS levels, array_agg(w.idx::float8 ORDER BY w.level DESC) AS indexes,
                  array_agg(encode(node.hash, 'hex') ORDER BY w.level DESC) AS hashes
             FROM (SELECT l.level, ((${first} - 2) >> l.level) - 1 AS idx FROM generate_series(0, 62) AS l(level)
                    WHERE ((${first} - 2) >> l.level) & 1 = 1) w
             CROSS JOIN ${merkleNodeAt(chains.column('id'), 'w.level', 'w.idx')}) n
        WHERE ${chains.column('accountId')} = $1 AND ${first} > 1 AND ($2::uuid IS NULL OR ${chains.column('id')} = $2)
        ORDER BY ${chains.column('id')}`,
      [ulidToUuid(accountId), chainId === null ? null : ulidToUuid(chainId)],
    );
    return rows.map(({ chainId, lastPosition, lastHash, lastTimestamp, levels, indexes, hashes }) => ({
      chainId,
      lastPosition,
      lastHash,
      lastTimestamp,
      nodes: (hashes ?? []).map((hash, i) => ({ level: levels![i]!, index: indexes![i]!, hash })),
    }));
  }

  /** The matching events, counted up to `cap` (so a huge match costs no more than cap rows). */
  async countUpTo(cap: number): Promise<number> {
    const [row] = await selectRows(
      this.runner.manager,
      COUNT,
      `SELECT ${COUNT.sql} FROM (SELECT 1 ${this.from.text} LIMIT ${cap}) AS m`,
      this.from.params,
    );
    return row?.n ?? 0;
  }

  /** Opens the cursor over the matching events, oldest first by (timestamp, id); then `fetch` reads them in order. */
  /**
   * The version-2 events of the snapshot with what their `hashing` is made of (a JSON export's
   * `export.hashing`, written before its rows): at most EXPORT_LIMIT rows, as the count allowed.
   */
  async secrets(): Promise<EventSecretsRecord[]> {
    return selectRows(
      this.runner.manager,
      SECRETS,
      `SELECT ${SECRETS.sql} ${this.from.text} AND (${events.column('saltSeed')} IS NOT NULL OR ${events.column('erasure')} IS NOT NULL)`,
      this.from.params,
    );
  }

  async openCursor(): Promise<void> {
    await this.runner.query(
      `DECLARE ${CURSOR} NO SCROLL CURSOR FOR
         SELECT ${EVENT_RECORD.sql} ${this.from.text} ORDER BY ${events.column('timestamp')}, ${events.column('id')}`,
      this.from.params,
    );
  }

  async fetch(rows: number): Promise<EventRecord[]> {
    return selectRows(this.runner.manager, EVENT_RECORD, `FETCH FORWARD ${rows} FROM ${CURSOR}`);
  }

  close(): Promise<void> {
    this.closing ??= this.end();
    return this.closing;
  }

  /** ROLLBACK also closes the cursor; a connection that cannot end it is discarded, not reused. */
  private async end(): Promise<void> {
    try {
      await this.runner.query('ROLLBACK');
      await this.runner.release();
    } catch (error) {
      EventSnapshot.logger.warn(
        `Discarding an export connection: ${error instanceof Error ? error.message : String(error)}`,
      );
      await releaseRunner(this.runner, error);
    }
  }
}

/** GET /v1/export: the matching events and pruned chains as one consistent snapshot. */
@Injectable()
export class EventExportRepository {
  constructor(private readonly reads: ReadReplica) {}

  /**
   * A read-only snapshot of the events matching `filters` (inclusive bounds), oldest first by
   * (timestamp, id) on the (account, timestamp, id) index: count them, then read them through a
   * cursor, both in one REPEATABLE READ transaction on one connection of its own, each statement
   * cancelled past `statementTimeoutMs`. On DATABASE_READ_URL's replica when it may serve the read
   * (ReadReplica: never older than the primary when the export began), else on the primary.
   */
  async openSnapshot(accountId: string, filters: EventFilters, statementTimeoutMs: number): Promise<EventSnapshot> {
    const from = matching(accountId, { ...filters, inclusive: true });
    return this.reads.open((dataSource, floor) => EventSnapshot.open(dataSource, from, statementTimeoutMs, floor));
  }
}
