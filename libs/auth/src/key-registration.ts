import { ulid } from 'ulid';
import type { Scope } from '@app/common/config/app-config';
import { apiKeyPrefix, digestApiKey } from './api-key';

/** Runs one SQL statement and returns its rows: TypeORM's `manager.query`, or `pg`'s `client.query(…).rows`. */
export type RunSql = (sql: string, params: unknown[]) => Promise<unknown[]>;

/**
 * Makes sure the account exists and the key is registered to it, stored only as its SHA-256
 * digest and prefix. Idempotent, so instances starting together may race; call it inside a
 * transaction. Shared by API_KEYS at start and `npm run cli -- keys create` (no Nest needed).
 */
export async function registerApiKey(
  run: RunSql,
  key: { account: string; key: string; scopes: readonly Scope[] },
): Promise<{ accountId: string; keyId: string }> {
  await run(`INSERT INTO accounts (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [
    `acc_${ulid()}`,
    key.account,
  ]);
  const [account] = (await run(`SELECT id FROM accounts WHERE name = $1`, [key.account])) as { id: string }[];
  const digest = digestApiKey(key.key);
  await run(
    `INSERT INTO api_keys (id, account_id, prefix, key_digest, scopes) VALUES ($1, $2, $3, $4, $5) ON CONFLICT (key_digest) DO NOTHING`,
    [`key_${ulid()}`, account!.id, apiKeyPrefix(key.key), digest, key.scopes],
  );
  const [row] = (await run(`SELECT id, account_id FROM api_keys WHERE key_digest = $1`, [digest])) as {
    id: string;
    account_id: string;
  }[];
  if (!row || row.account_id !== account!.id)
    throw new Error(`the key given for account '${key.account}' is already registered to another account`);
  return { accountId: account!.id, keyId: row.id };
}
