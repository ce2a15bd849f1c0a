import { RUN_PREFIX_ENV, withAdmin } from './postgres';

/** Drops the databases this run created. */
export default async function globalTeardown(): Promise<void> {
  const prefix = process.env[RUN_PREFIX_ENV];
  if (process.env.E2E_MODE !== 'postgres' || !prefix) return;
  await withAdmin(async (admin) => {
    const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [
      `${prefix}%`,
    ]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  });
}
