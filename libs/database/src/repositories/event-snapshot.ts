import { Logger } from '@nestjs/common';
import { DataSource, QueryRunner } from 'typeorm';
import type { EventRecord } from './events.repository';

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
 */
export class EventSnapshot {
  private static readonly logger = new Logger('Export');
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly runner: QueryRunner,
    private readonly sql: SnapshotSql,
  ) {}

  static async open(dataSource: DataSource, sql: SnapshotSql): Promise<EventSnapshot> {
    const runner = dataSource.createQueryRunner();
    try {
      await runner.connect();
      await runner.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    } catch (error) {
      await runner.release();
      throw error;
    }
    return new EventSnapshot(runner, sql);
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
      // TypeORM's postgres runner hands an error to pg-pool, which then destroys the client.
      await (
        this.runner as unknown as { releasePostgresConnection(error: unknown): Promise<void> }
      ).releasePostgresConnection(error);
    }
  }
}
