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
    this.rows.set(keyDigest, { id: `key_${this.rows.size}`, accountId: 'acc_1', keyDigest, scopes: ['read'] });
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
    expect(await sut.authenticate(valid)).toMatchObject({ keyId: 'key_0' });
    for (let i = 0; i < 12_000; i += 500) {
      await Promise.all(Array.from({ length: 500 }, () => sut.authenticate(generateApiKey())));
    }
    expect(await sut.authenticate(valid)).toMatchObject({ keyId: 'key_0' });
    expect(table.lookupsOf(valid)).toBe(1);
  });

  it('holds at most 10,000 valid keys and forgets the least recently used, not all of them', async () => {
    const keys = Array.from({ length: 10_001 }, () => generateApiKey());
    keys.forEach((key) => table.add(key));
    for (const key of keys.slice(0, 10_000)) await sut.authenticate(key);
    await sut.authenticate(keys[0]!); // now the most recently used
    await sut.authenticate(keys[10_000]!); // evicts keys[1], the least recently used
    expect(sut.cached(keys[0]!)).toBeDefined();
    expect(sut.cached(keys[1]!)).toBeUndefined();
    expect(sut.cached(keys[2]!)).toBeDefined();
    expect(sut.cached(keys[10_000]!)).toBeDefined();
    expect(table.lookups).toHaveLength(10_001);
  });

  it('concurrent lookups of one key share one query, valid or not', async () => {
    const valid = generateApiKey();
    const unknown = generateApiKey();
    table.add(valid);
    const answers = await Promise.all([
      ...Array.from({ length: 20 }, () => sut.authenticate(valid)),
      ...Array.from({ length: 20 }, () => sut.authenticate(unknown)),
    ]);
    expect(answers.filter((a) => a !== null)).toHaveLength(20);
    expect(table.lookupsOf(valid)).toBe(1);
    expect(table.lookupsOf(unknown)).toBe(1);
    expect(await sut.authenticate(unknown)).toBeNull();
    expect(table.lookupsOf(unknown)).toBe(1);
  });

  it('never looks up what cannot be a key', async () => {
    await expect(sut.authenticate('short')).resolves.toBeNull();
    await expect(sut.authenticate('x'.repeat(257))).resolves.toBeNull();
    expect(table.lookups).toHaveLength(0);
  });

  it('a lookup that fails throws, and is not remembered as a refusal', async () => {
    const valid = generateApiKey();
    table.add(valid);
    table.failing = true;
    await expect(sut.authenticate(valid)).rejects.toThrow(/timeout/);
    table.failing = false;
    await expect(sut.authenticate(valid)).resolves.toMatchObject({ keyId: 'key_0' });
  });
});
