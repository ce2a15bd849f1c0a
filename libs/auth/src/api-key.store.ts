import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { API_KEY_TEXT } from '@app/common';
import { ApiKeysRepository } from '@app/database';
import { digestApiKey, digestsEqual } from './api-key';
import { AuthenticatedKey } from './authenticated-key';

/** A revoked key stops working, and a new one starts, within this long. */
const CACHE_TTL_MS = 5_000;
/** Most valid keys, and most refused digests, remembered (each its own LRU). */
const VALID_KEYS_MAX = 10_000;
const REFUSED_KEYS_MAX = 10_000;

/**
 * Resolves presented keys by digest, keeping the database off the hot path: valid keys in one
 * bounded LRU, digests just refused in another (so a flood of bad keys neither reaches the
 * database twice nor evicts a valid key), and concurrent lookups of one digest share one query.
 */
@Injectable()
export class ApiKeyStore {
  private readonly valid = new LRUCache<string, AuthenticatedKey>({
    max: VALID_KEYS_MAX,
    ttl: CACHE_TTL_MS,
    fetchMethod: (digest) => this.find(digest),
  });
  private readonly refused = new LRUCache<string, true>({ max: REFUSED_KEYS_MAX, ttl: CACHE_TTL_MS });

  constructor(private readonly apiKeys: ApiKeysRepository) {}

  /** The key when it was found valid in the last CACHE_TTL_MS; never queries. */
  cached(presented: string): AuthenticatedKey | undefined {
    return this.valid.get(digestApiKey(presented));
  }

  /** The key, or null for an unknown, revoked or malformed one. Throws when the database cannot answer. */
  async authenticate(presented: string): Promise<AuthenticatedKey | null> {
    if (!API_KEY_TEXT.test(presented)) return null;
    const digest = digestApiKey(presented);
    if (this.refused.has(digest)) return null;
    return (await this.valid.fetch(digest)) ?? null;
  }

  private async find(digest: string): Promise<AuthenticatedKey | undefined> {
    const row = await this.apiKeys.findActiveByDigest(digest);
    if (row && digestsEqual(row.keyDigest, digest))
      return { keyId: row.id, accountId: row.accountId, scopes: row.scopes };
    this.refused.set(digest, true);
    return undefined;
  }
}
