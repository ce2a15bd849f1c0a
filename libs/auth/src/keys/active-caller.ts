import { AppError } from '@app/common';
import { ApiKeysRepository, Db } from '@app/database';
import { AuthenticatedKey } from '../authenticated-key';

/**
 * The calling key as the database has it now, its row locked until `tx` ends; 401 when it is
 * revoked or expired. Every change made with a key (accounts, keys) calls this inside its own
 * transaction rather than trusting ApiKeyStore's cache (docs/contract.md §12): a key revoked a moment ago
 * on another instance cannot mint its replacement, and of two keys revoking each other at once
 * the second to take the lock finds itself revoked. The scopes returned are the row's.
 */
export async function lockActiveCaller(
  apiKeys: ApiKeysRepository,
  caller: AuthenticatedKey,
  tx: Db,
): Promise<AuthenticatedKey> {
  const row = await apiKeys.lockActive(caller.keyId, tx);
  if (!row) throw AppError.unauthorized();
  return { keyId: row.id, accountId: row.accountId, scopes: row.scopes };
}
