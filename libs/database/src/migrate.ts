import { DataSource, MigrationExecutor } from 'typeorm';

/** Any fixed number: the advisory lock that lets one instance at a time migrate. */
export const MIGRATION_LOCK = 0x41554454;

/** PostgreSQL's insufficient_privilege: what a role that owns nothing gets when a migration changes the schema. */
const INSUFFICIENT_PRIVILEGE = '42501';

/** The schema is not one this role can serve on, and retrying the connection will not change that. */
export class SchemaNotReadyError extends Error {}

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
  } catch (error) {
    // The driver's message alone ("permission denied for schema public") does not say what to do.
    if ((error as { code?: unknown }).code === INSUFFICIENT_PRIVILEGE)
      throw new SchemaNotReadyError(
        `Migrating the database failed: ${(error as Error).message}. This role may not change the schema: run the migrations as the schema's owner (npm run migration:run, or compose's migrate service), then start the service with DATABASE_MIGRATIONS=check.`,
        { cause: error },
      );
    throw error;
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).catch(() => undefined);
    await runner.release();
  }
}

/**
 * DATABASE_MIGRATIONS=check: applies nothing (the role may own nothing) and refuses to start while
 * a migration is pending, naming them: code that expects a newer schema must not serve on an older one.
 */
export async function checkMigrations(dataSource: DataSource): Promise<void> {
  const pending = await new MigrationExecutor(dataSource).getPendingMigrations();
  if (pending.length === 0) return;
  throw new SchemaNotReadyError(
    `DATABASE_MIGRATIONS=check: ${pending.length} migration(s) pending (${pending.map((m) => m.name).join(', ')}). Run them as the schema's owner first (npm run migration:run, or compose's migrate service); a role that cannot read typeorm_migrations sees every migration as pending (GRANT SELECT ON typeorm_migrations, libs/database/sql/least-privilege.sql).`,
  );
}
