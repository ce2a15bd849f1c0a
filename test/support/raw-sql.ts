import type { PoolClient } from 'pg';
import { DataSource } from 'typeorm';

/** What the work of attemptSql runs its statements on. */
export type Sql = { query: (text: string, params?: unknown[]) => Promise<unknown> };

/**
 * Runs SQL in a transaction on a raw pooled connection (TypeORM would log every refusal),
 * rolled back when it fails; returns the error, if any.
 */
export async function attemptSql(
  dataSource: DataSource,
  work: (m: Sql) => Promise<unknown>,
): Promise<{ code?: string; message: string } | null> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  const client = (runner as unknown as { databaseConnection: PoolClient }).databaseConnection;
  try {
    await client.query('BEGIN');
    await work({ query: (text, params) => client.query(text, params) });
    await client.query('COMMIT');
    return null;
  } catch (error) {
    await client.query('ROLLBACK');
    return error as { code?: string; message: string };
  } finally {
    await runner.release();
  }
}
