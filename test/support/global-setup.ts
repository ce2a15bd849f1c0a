import { postgresReachable, RUN_PREFIX_ENV } from './postgres';

/**
 * Chooses the database of this run: a real PostgreSQL server when one answers (each suite then
 * gets a fresh database named audit_test_<run>_<n>), else the embedded default.
 */
export default async function globalSetup(): Promise<void> {
  const usePostgres = process.env.E2E_EMBEDDED !== '1' && (await postgresReachable());
  process.env.E2E_MODE = usePostgres ? 'postgres' : 'embedded';
  process.env[RUN_PREFIX_ENV] = `audit_test_${process.pid}_${Date.now().toString(36)}`;
  console.log(
    `\ne2e database: ${usePostgres ? 'PostgreSQL (fresh database per suite)' : 'embedded PGlite (fresh data directory per suite)'}`,
  );
}
