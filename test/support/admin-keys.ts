import { parseApiKeys } from '@app/common';
import { KEYS } from './test-app';

/** Keys of the admin API's suites: an operator of `system`, admins of acme and globex, besides the usual KEYS. */
export const ADMIN_KEYS = {
  operator: 'system-operator-0123456789abcdef',
  acmeAdmin: 'acme-admin-0123456789abcdef',
  acmeAdmin2: 'acme-admin2-0123456789abcdef',
  globexAdmin: 'globex-admin-0123456789abcdef',
} as const;

/** API_KEYS of those suites, as the `bootstrapKeys` override of startTestApp. */
export function adminBootstrapKeys(): ReturnType<typeof parseApiKeys> {
  const problems: string[] = [];
  const keys = parseApiKeys(
    [
      `acme:${KEYS.acme}`,
      `acme:${KEYS.acmeIngestOnly}:ingest`,
      `acme:${KEYS.acmeReadOnly}:read`,
      `globex:${KEYS.globex}`,
      `system:${ADMIN_KEYS.operator}:operator`,
      `acme:${ADMIN_KEYS.acmeAdmin}:admin`,
      `acme:${ADMIN_KEYS.acmeAdmin2}:admin`,
      `globex:${ADMIN_KEYS.globexAdmin}:admin`,
    ].join(','),
    problems,
  );
  if (problems.length > 0) throw new Error(problems.join('\n'));
  return keys;
}

/** Every row of every table of the public schema whose text (all its columns) contains `text`. */
export async function rowsContaining(
  query: (sql: string, params?: unknown[]) => Promise<unknown>,
  text: string,
): Promise<string[]> {
  const tables = (await query(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' AND table_type = 'BASE TABLE'`,
  )) as { name: string }[];
  const found: string[] = [];
  for (const { name } of tables) {
    const rows = (await query(`SELECT t::text AS row FROM "${name}" t WHERE strpos(t::text, $1) > 0`, [text])) as {
      row: string;
    }[];
    found.push(...rows.map((r) => `${name}: ${r.row}`));
  }
  return found;
}
