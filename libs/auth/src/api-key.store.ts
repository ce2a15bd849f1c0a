import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ApiKeysRepository } from '@app/database';
import { digestsEqual } from './api-key';
import { AuthenticatedKey } from './authenticated-key';

/** A revoked key stops working, and a new one starts, within this long. */
const CACHE_TTL_MS = 5_000;
/** Most valid keys, and most refused digests, remembered (each its own LRU). */
const VALID_KEYS_MAX = 10_000;
const REFUSED_KEYS_MAX = 10_000;

/**
 * Resolves keys by their digest (`digestApiKey`, taken once per request by KeyAuthenticator),
 * keeping the database off the hot path: valid keys in one bounded LRU, digests just refused in
 * another (so a flood of bad keys neither reaches the database twice nor evicts a valid key).
 * Concurrent lookups of one digest are shared by KeyAuthenticator, not here.
 */
@Injectable()
export class ApiKeyStore {
  private readonly valid = new LRUCache<string, AuthenticatedKey>({ max: VALID_KEYS_MAX, ttl: CACHE_TTL_MS });
  private readonly refused = new LRUCache<string, true>({ max: REFUSED_KEYS_MAX, ttl: CACHE_TTL_MS });

  constructor(private readonly apiKeys: ApiKeysRepository) {}

  /** The key when it was found valid in the last CACHE_TTL_MS; never queries. */
  cached(digest: string): AuthenticatedKey | undefined {
    return this.valid.get(digest);
  }

  /**
   * The key, or null for an unknown or revoked one (refused digests are remembered for
   * CACHE_TTL_MS). Throws when the database cannot answer, and then remembers nothing.
   */
  async lookUp(digest: string): Promise<AuthenticatedKey | null> {
    if (this.refused.has(digest)) return null;
    const row = await this.apiKeys.findActiveByDigest(digest);
    if (row && digestsEqual(row.keyDigest, digest)) {
      const key: AuthenticatedKey = { keyId: row.id, accountId: row.accountId, scopes: row.scopes };
      this.valid.set(digest, key);
      return key;
    }
    this.refused.set(digest, true);
    return null;
  }
}
