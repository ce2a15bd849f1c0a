import { Logger } from '@nestjs/common';
import { DataSource, QueryRunner } from 'typeorm';

export interface Sql {
  text: string;
  params: unknown[];
}

const CURSOR = 'export_rows';

/**
 * One connection holding one REPEATABLE READ, READ ONLY transaction: what is counted is exactly
 * what the cursor then returns. Holds no other connection (the embedded pool has only one).
 * `close()` is idempotent and always returns the connection, ending the transaction first.
 */
export class ExportSnapshot {
  private static readonly logger = new Logger('Export');
  private closing: Promise<void> | null = null;

  private constructor(private readonly runner: QueryRunner) {}

  static async open(dataSource: DataSource): Promise<ExportSnapshot> {
    const runner = dataSource.createQueryRunner();
    try {
      await runner.connect();
      await runner.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
    } catch (error) {
      await runner.release();
      throw error;
    }
    return new ExportSnapshot(runner);
  }

  /** Rows of `query`, counted up to `cap` (so a huge match costs no more than cap rows). */
  async countUpTo(query: Sql, cap: number): Promise<number> {
    const rows = (await this.runner.query(
      `SELECT count(*)::int AS n FROM (${query.text} LIMIT ${cap}) AS matching`,
      query.params,
    )) as { n: number }[];
    return rows[0]?.n ?? 0;
  }

  async declareCursor(query: Sql): Promise<void> {
    await this.runner.query(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${query.text}`, query.params);
  }

  fetch<Row>(rows: number): Promise<Row[]> {
    return this.runner.query(`FETCH FORWARD ${rows} FROM ${CURSOR}`) as Promise<Row[]>;
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
      ExportSnapshot.logger.warn(
        `Discarding an export connection: ${error instanceof Error ? error.message : String(error)}`,
      );
      // TypeORM's postgres runner hands an error to pg-pool, which then destroys the client.
      await (
        this.runner as unknown as { releasePostgresConnection(error: unknown): Promise<void> }
      ).releasePostgresConnection(error);
    }
  }
}
