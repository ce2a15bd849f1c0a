import { Client } from 'pg';

/** The PostgreSQL server e2e tests use: E2E_POSTGRES_URL, else DATABASE_URL, else the local one. */
export const ADMIN_URL =
  process.env.E2E_POSTGRES_URL ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const RUN_PREFIX_ENV = 'E2E_DATABASE_PREFIX';
/** On the embedded default: the migrated data directory each suite's fresh one is copied from (embedded-template.ts). */
export const EMBEDDED_TEMPLATE_ENV = 'E2E_EMBEDDED_TEMPLATE';
/** The folder of a DATA_DIR that holds PGlite's files (libs/database/src/embedded-postgres.ts). */
export const PGLITE_FOLDER = 'pglite';

export async function postgresReachable(): Promise<boolean> {
  const client = new Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export function withAdmin<T>(work: (client: Client) => Promise<T>): Promise<T> {
  return withClient(ADMIN_URL, work);
}

/** Runs `work` on a connection of its own to the database at `url`, closed after. */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export function databaseUrl(name: string): string {
  const url = new URL(ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}
