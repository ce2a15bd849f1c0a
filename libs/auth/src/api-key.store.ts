import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { IsNull, Repository } from 'typeorm';
import { ApiKeyEntity } from '@app/database';
import { digestApiKey, digestsEqual } from './api-key';
import { AuthenticatedKey } from './authenticated-key';

const CACHE_TTL_MS = 5_000;
const CACHE_MAX = 10_000;

/**
 * Resolves presented keys by digest. A short-lived cache keeps the database off the hot path;
 * a revoked key stops working within CACHE_TTL_MS.
 */
@Injectable()
export class ApiKeyStore {
  private readonly cache = new Map<string, { key: AuthenticatedKey | null; expires: number }>();

  constructor(@InjectRepository(ApiKeyEntity) private readonly keys: Repository<ApiKeyEntity>) {}

  async authenticate(presented: string): Promise<AuthenticatedKey | null> {
    const digest = digestApiKey(presented);
    const cached = this.cache.get(digest);
    if (cached && cached.expires > Date.now()) return cached.key;
    const row = await this.keys.findOne({ where: { keyDigest: digest, revokedAt: IsNull() } });
    const key =
      row && digestsEqual(row.keyDigest, digest)
        ? { keyId: row.id, accountId: row.accountId, scopes: row.scopes }
        : null;
    if (this.cache.size >= CACHE_MAX) this.cache.clear();
    this.cache.set(digest, { key, expires: Date.now() + CACHE_TTL_MS });
    return key;
  }
}
