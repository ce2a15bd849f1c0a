import { ulid } from 'ulid';
import type { Scope } from '@app/common/config/app-config';
import type { AccountsRepository } from '@app/database/repositories/accounts.repository';
import type { ApiKeysRepository } from '@app/database/repositories/api-keys.repository';
import type { Db } from '@app/database/transaction-runner';
import { apiKeyPrefix, digestApiKey } from './api-key';

/** The repositories registering a key writes to. */
export interface KeyRegistrationRepositories {
  accounts: AccountsRepository;
  apiKeys: ApiKeysRepository;
}

/**
 * Makes sure the account exists and the key is registered to it, stored only as its SHA-256
 * digest and prefix. Idempotent, so instances starting together may race; call it inside a
 * transaction (`tx`). Shared by API_KEYS at start and `npm run cli -- keys create`.
 */
export async function registerApiKey(
  repositories: KeyRegistrationRepositories,
  key: { account: string; key: string; scopes: readonly Scope[] },
  tx: Db,
): Promise<{ accountId: string; keyId: string }> {
  const accountId = await repositories.accounts.ensureByName(key.account, `acc_${ulid()}`, tx);
  const row = await repositories.apiKeys.ensure(
    {
      newId: `key_${ulid()}`,
      accountId,
      prefix: apiKeyPrefix(key.key),
      keyDigest: digestApiKey(key.key),
      scopes: key.scopes,
    },
    tx,
  );
  if (row.accountId !== accountId)
    throw new Error(`the key given for account '${key.account}' is already registered to another account`);
  return { accountId, keyId: row.id };
}
