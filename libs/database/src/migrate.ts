import { DataSource, MigrationExecutor } from 'typeorm';

/** Any fixed number: the advisory lock that lets one instance at a time migrate. */
const MIGRATION_LOCK = 0x41554454;

/**
 * Runs pending migrations in one transaction while holding an advisory lock, so instances that
 * start together on one database migrate once. Uses a single connection (the embedded database
 * has only one).
 */
export async function runMigrations(dataSource: DataSource): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    const executor = new MigrationExecutor(dataSource, runner);
    executor.transaction = 'all';
    await executor.executePendingMigrations();
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.release();
  }
}
