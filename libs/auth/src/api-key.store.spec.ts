import type { ActiveApiKeyRow, ApiKeysRepository } from '@app/database';
import { digestApiKey, generateApiKey } from './api-key';
import { ApiKeyStore } from './api-key.store';

/**
 * The store's caching, over an in-memory api_keys table that counts its lookups (the e2e suite
 * test/authentication.e2e-spec.ts counts the real queries).
 */
class InMemoryApiKeys {
  readonly rows = new Map<string, ActiveApiKeyRow>();
  readonly lookups: string[] = [];
  failing = false;

  add(key: string): void {
    const keyDigest = digestApiKey(key);
    this.rows.set(keyDigest, {
      id: `key_${this.rows.size}`,
      accountId: 'acc_1',
      keyDigest,
      scopes: ['read'],
      expiresAt: null,
    });
  }

  async findActiveByDigest(digest: string): Promise<ActiveApiKeyRow | null> {
    this.lookups.push(digest);
    await new Promise((resolve) => setImmediate(resolve));
    if (this.failing) throw new Error('timeout exceeded when trying to connect');
    return this.rows.get(digest) ?? null;
  }

  lookupsOf(key: string): number {
    return this.lookups.filter((d) => d === digestApiKey(key)).length;
  }
}

describe('ApiKeyStore', () => {
  let table: InMemoryApiKeys;
  let sut: ApiKeyStore;
  beforeEach(() => {
    table = new InMemoryApiKeys();
    sut = new ApiKeyStore(table as unknown as ApiKeysRepository);
  });

  it('a flood of refused keys does not evict a valid key', async () => {
    const valid = generateApiKey();
    table.add(valid);
    expect(await sut.lookUp(digestApiKey(valid))).toMatchObject({ keyId: 'key_0' });
    for (let i = 0; i < 12_000; i += 500) {
      await Promise.all(Array.from({ length: 500 }, () => sut.lookUp(digestApiKey(generateApiKey()))));
    }
    expect(sut.cached(digestApiKey(valid))).toMatchObject({ keyId: 'key_0' });
    expect(table.lookupsOf(valid)).toBe(1);
  });

  it('holds at most 10,000 valid keys and forgets the least recently used, not all of them', async () => {
    const keys = Array.from({ length: 10_001 }, () => generateApiKey());
    keys.forEach((key) => table.add(key));
    for (const key of keys.slice(0, 10_000)) await sut.lookUp(digestApiKey(key));
    sut.cached(digestApiKey(keys[0]!)); // now the most recently used
    await sut.lookUp(digestApiKey(keys[10_000]!)); // evicts keys[1], the least recently used
    expect(sut.cached(digestApiKey(keys[0]!))).toBeDefined();
    expect(sut.cached(digestApiKey(keys[1]!))).toBeUndefined();
    expect(sut.cached(digestApiKey(keys[2]!))).toBeDefined();
    expect(sut.cached(digestApiKey(keys[10_000]!))).toBeDefined();
    expect(table.lookups).toHaveLength(10_001);
  });

  it('forgets revoked keys by id at once, and no other', async () => {
    const keys = Array.from({ length: 5 }, () => generateApiKey());
    keys.forEach((key) => table.add(key));
    for (const key of keys) await sut.lookUp(digestApiKey(key));
    sut.forget(['key_1', 'key_3']);
    expect(keys.map((key) => sut.cached(digestApiKey(key))?.keyId)).toEqual([
      'key_0',
      undefined,
      'key_2',
      undefined,
      'key_4',
    ]);
  });

  it('a key that expires is not remembered past its expiry', async () => {
    const key = generateApiKey();
    table.add(key);
    table.rows.get(digestApiKey(key))!.expiresAt = new Date(Date.now() + 30);
    await sut.lookUp(digestApiKey(key));
    expect(sut.cached(digestApiKey(key))).toBeDefined();
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(sut.cached(digestApiKey(key))).toBeUndefined();
  });

  it('remembers a refused digest: it is not looked up again', async () => {
    const unknown = digestApiKey(generateApiKey());
    expect(await sut.lookUp(unknown)).toBeNull();
    expect(await sut.lookUp(unknown)).toBeNull();
    expect(table.lookups).toEqual([unknown]);
  });

  it('a lookup that fails throws, and is not remembered as a refusal', async () => {
    const valid = generateApiKey();
    table.add(valid);
    table.failing = true;
    await expect(sut.lookUp(digestApiKey(valid))).rejects.toThrow(/timeout/);
    table.failing = false;
    await expect(sut.lookUp(digestApiKey(valid))).resolves.toMatchObject({ keyId: 'key_0' });
  });
});
