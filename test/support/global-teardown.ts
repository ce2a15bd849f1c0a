import { rmSync } from 'node:fs';
import { EMBEDDED_TEMPLATE_ENV, RUN_PREFIX_ENV, withAdmin } from './postgres';

/** Drops the databases this run created, or the embedded template it copied them from. */
export default async function globalTeardown(): Promise<void> {
  const template = process.env[EMBEDDED_TEMPLATE_ENV];
  if (template) rmSync(template, { recursive: true, force: true });
  const prefix = process.env[RUN_PREFIX_ENV];
  if (process.env.E2E_MODE !== 'postgres' || !prefix) return;
  await withAdmin(async (admin) => {
    const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE $1`, [
      `${prefix}%`,
    ]);
    for (const { datname } of rows) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  });
}
