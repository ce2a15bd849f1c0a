import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ApiKeysRepository } from '@app/database';
import { digestsEqual } from './api-key';
import { AuthenticatedKey } from './authenticated-key';

/**
 * How long a valid key is trusted without asking the database. docs/contract.md §12: a revoked or
 * expired key is refused by every instance within 5 s; a key cached just before its revocation is
 * accepted up to this long after it, so 4 s leaves room for the lookup that follows. A bounded
 * cache lifetime rather than LISTEN/NOTIFY: it costs the hot path nothing (one LRU read; one
 * indexed lookup per key every 4 s instead of every 5 s) and needs no connection held per instance.
 */
export const CACHE_TTL_MS = 4_000;
/** Most valid keys, and most refused digests, remembered (each its own LRU). */
const VALID_KEYS_MAX = 10_000;
const REFUSED_KEYS_MAX = 10_000;
/** Most digests remembered as once valid (AuthFailureLimiter's exemption: `mayBeValid`). */
const KNOWN_DIGESTS_MAX = 50_000;

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
  /**
   * Digests of keys that were active when this instance last heard of them (at start, at a lookup,
   * at their creation here): presented from an address over the refused-key limit, only these are
   * still looked up, so bogus keys cannot lock a valid key out and cost no query (issue 18, item 11).
   */
  private readonly known = new LRUCache<string, true>({ max: KNOWN_DIGESTS_MAX });

  constructor(private readonly apiKeys: ApiKeysRepository) {}

  /** The key when it was found valid in the last CACHE_TTL_MS; never queries. */
  cached(digest: string): AuthenticatedKey | undefined {
    return this.valid.get(digest);
  }

  /** Whether this digest belonged to an active key when this instance last heard of it. */
  mayBeValid(digest: string): boolean {
    return this.known.has(digest);
  }

  /** Remembers digests as belonging to active keys (at start: every active key; a key made here). */
  remember(digests: Iterable<string>): void {
    for (const digest of digests) {
      this.known.set(digest, true);
      this.refused.delete(digest);
    }
  }

  /** Every active key's digest, read at start (newest first, as many as are remembered). */
  async preload(): Promise<void> {
    this.remember(await this.apiKeys.activeDigests(KNOWN_DIGESTS_MAX));
  }

  /** Forgets these keys at once on this instance (revoked or given an expiry here); other instances within CACHE_TTL_MS. */
  forget(keyIds: readonly string[]): void {
    const ids = new Set(keyIds);
    const digests = [...this.valid.entries()].filter(([, key]) => ids.has(key.keyId)).map(([digest]) => digest);
    for (const digest of digests) this.valid.delete(digest);
  }

  /**
   * The key, or null for an unknown, revoked or expired one (refused digests are remembered for
   * CACHE_TTL_MS). Throws when the database cannot answer, and then remembers nothing.
   */
  async lookUp(digest: string): Promise<AuthenticatedKey | null> {
    if (this.refused.has(digest)) return null;
    const row = await this.apiKeys.findActiveByDigest(digest);
    if (row && digestsEqual(row.keyDigest, digest)) {
      const key: AuthenticatedKey = { keyId: row.id, accountId: row.accountId, scopes: row.scopes };
      // An expiring key is not remembered past its expiry.
      const ttl = row.expiresAt ? Math.min(CACHE_TTL_MS, row.expiresAt.getTime() - Date.now()) : CACHE_TTL_MS;
      if (ttl > 0) this.valid.set(digest, key, { ttl });
      this.known.set(digest, true);
      return key;
    }
    this.refused.set(digest, true);
    this.known.delete(digest);
    return null;
  }
}
