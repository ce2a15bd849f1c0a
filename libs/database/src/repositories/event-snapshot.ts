import { Logger } from '@nestjs/common';
import { DataSource, QueryRunner } from 'typeorm';
import type { ExportedPrunedChain } from '@app/verification';
import type { EventRecord } from './events.repository';
import { beginBounded, releaseRunner } from '../transaction-runner';
import { merkleNodeAt } from './merkle-nodes.repository';

interface SnapshotSql {
  count: (cap: number) => { text: string; params: unknown[] };
  rows: { text: string; params: unknown[] };
  /** A fetched row as the domain record. */
  toRecord: (row: never) => EventRecord;
}

const CURSOR = 'export_rows';

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
    private readonly sql: SnapshotSql,
  ) {}

  static async open(dataSource: DataSource, sql: SnapshotSql, statementTimeoutMs: number): Promise<EventSnapshot> {
    const runner = dataSource.createQueryRunner();
    try {
      await runner.connect();
      await beginBounded(runner, 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', statementTimeoutMs);
    } catch (error) {
      await runner.release();
      throw error;
    }
    return new EventSnapshot(runner, sql);
  }

  /**
   * The account's pruned chains (docs/contract.md §14; only `chainId` when given) as of the snapshot: the
   * last pruned event's position, hash and time, and the kept Merkle nodes over the positions
   * before it (`frontierIds(lastPosition − 1)`, left to right), for the export's header.
   */
  async pruned(accountId: string, chainId: string | null): Promise<ExportedPrunedChain[]> {
    const rows = (await this.runner.query(
      `SELECT c.id, (c.first_position - 1)::float8 AS last_position, c.pruned_hash,
              to_char(c.pruned_timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS last_timestamp,
              n.levels, n.indexes, n.hashes
         FROM chains c CROSS JOIN LATERAL (
           SELECT array_agg(w.level ORDER BY w.level DESC) AS levels, array_agg(w.idx::float8 ORDER BY w.level DESC) AS indexes,
                  array_agg(encode(node.hash, 'hex') ORDER BY w.level DESC) AS hashes
             FROM (SELECT l.level, ((c.first_position - 2) >> l.level) - 1 AS idx FROM generate_series(0, 62) AS l(level)
                    WHERE ((c.first_position - 2) >> l.level) & 1 = 1) w
             CROSS JOIN ${merkleNodeAt('c.id', 'w.level', 'w.idx')}) n
        WHERE c.account_id = $1 AND c.first_position > 1 AND ($2::varchar IS NULL OR c.id = $2)
        ORDER BY c.id`,
      [accountId, chainId],
    )) as {
      id: string;
      last_position: number;
      pruned_hash: string;
      last_timestamp: string;
      levels: number[] | null;
      indexes: number[] | null;
      hashes: string[] | null;
    }[];
    return rows.map((row) => ({
      chainId: row.id,
      lastPosition: row.last_position,
      lastHash: row.pruned_hash,
      lastTimestamp: row.last_timestamp,
      nodes: (row.hashes ?? []).map((hash, i) => ({ level: row.levels![i]!, index: row.indexes![i]!, hash })),
    }));
  }

  /** The matching events, counted up to `cap` (so a huge match costs no more than cap rows). */
  async countUpTo(cap: number): Promise<number> {
    const { text, params } = this.sql.count(cap);
    const rows = (await this.runner.query(text, params)) as { n: number }[];
    return rows[0]?.n ?? 0;
  }

  /** Opens the cursor over the matching events; then `fetch` reads them in order. */
  async openCursor(): Promise<void> {
    await this.runner.query(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${this.sql.rows.text}`, this.sql.rows.params);
  }

  async fetch(rows: number): Promise<EventRecord[]> {
    const fetched = (await this.runner.query(`FETCH FORWARD ${rows} FROM ${CURSOR}`)) as never[];
    return fetched.map(this.sql.toRecord);
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
