import crypto from 'node:crypto';
import type { Request } from 'express';
import { AppConfig } from '@app/common';
import { digestApiKey, generateApiKey } from './api-key';
import { ApiKeyStore } from './api-key.store';
import { ApiKeyStrategy } from './api-key.strategy';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { AuthenticatedKey } from './authenticated-key';
import { Authentication, KeyAuthenticator } from './key-authenticator';
import { KeyUsage } from './key-usage';

/** The real authenticator and failure limiter; the key store answers when the test says so. */
describe('KeyAuthenticator', () => {
  const key: AuthenticatedKey = { keyId: 'key_1', accountId: 'acc_1', scopes: ['ingest'] };
  const config = new AppConfig(); // AUTH_FAILURES_PER_MINUTE 60

  function authenticatorWith(answer: (digest: string) => Promise<AuthenticatedKey | null>) {
    const asked = { cached: [] as string[], lookUp: [] as string[], used: [] as string[] };
    const known = new Map<string, AuthenticatedKey>();
    const onceValid = new Set<string>();
    const store = {
      cached: (digest: string) => {
        asked.cached.push(digest);
        return known.get(digest);
      },
      lookUp: (digest: string) => {
        asked.lookUp.push(digest);
        return answer(digest);
      },
      mayBeValid: (digest: string) => onceValid.has(digest),
    } as unknown as ApiKeyStore;
    const usage = { noteUse: (keyId: string) => asked.used.push(keyId) } as unknown as KeyUsage;
    return { sut: new KeyAuthenticator(store, new AuthFailureLimiter(config), usage), asked, known, onceValid };
  }

  /** The outcome as a promise, whether or not it was answered synchronously. */
  function outcomeOf(sut: KeyAuthenticator, presented: string, address: string): Promise<Authentication> {
    return Promise.resolve(sut.authenticate(`Bearer ${presented}`, () => address));
  }

  it('lets more concurrent requests with one valid key through than the failure limit (its cache entry expired under load)', async () => {
    let answer!: (key: AuthenticatedKey) => void;
    const pendingAnswer = new Promise<AuthenticatedKey>((resolve) => (answer = resolve));
    const { sut, asked } = authenticatorWith(() => pendingAnswer);
    const presented = generateApiKey();
    const pending = Array.from({ length: config.authFailuresPerMinute + 40 }, () =>
      outcomeOf(sut, presented, '10.0.0.1'),
    );
    answer(key);
    const outcomes = await Promise.all(pending);
    expect(outcomes.filter((o) => o.outcome !== 'authenticated')).toEqual([]);
    expect(asked.lookUp).toEqual([digestApiKey(presented)]);
  });

  it('still counts each distinct refused key of an address against its limit', async () => {
    const { sut } = authenticatorWith(() => Promise.resolve(null));
    const outcomes = await Promise.all(
      Array.from({ length: config.authFailuresPerMinute + 5 }, () => outcomeOf(sut, generateApiKey(), '10.0.0.2')),
    );
    expect(outcomes.filter((o) => o.outcome === 'refused')).toHaveLength(config.authFailuresPerMinute);
    expect(outcomes.filter((o) => o.outcome === 'throttled')).toHaveLength(5);
  });

  it('61 refused keys do not lock a valid, uncached key out of the address (issue 18, item 11)', async () => {
    const valid = generateApiKey();
    const { sut, asked, onceValid } = authenticatorWith((digest) =>
      Promise.resolve(digest === digestApiKey(valid) ? key : null),
    );
    onceValid.add(digestApiKey(valid)); // known as a key's at start (ApiKeyStore.preload)
    for (let i = 0; i <= config.authFailuresPerMinute; i++) await outcomeOf(sut, generateApiKey(), '10.0.0.9');
    const bogusAfter = await outcomeOf(sut, generateApiKey(), '10.0.0.9');
    expect(bogusAfter.outcome).toBe('throttled');
    const lookupsBefore = asked.lookUp.length;
    await expect(outcomeOf(sut, valid, '10.0.0.9')).resolves.toEqual({ outcome: 'authenticated', key });
    expect(asked.lookUp.length).toBe(lookupsBefore + 1);
    expect(asked.used).toContain('key_1');
  });

  it('concurrent requests with one unknown key share one lookup, and one reservation', async () => {
    const { sut, asked } = authenticatorWith(() => Promise.resolve(null));
    const presented = generateApiKey();
    const outcomes = await Promise.all(
      Array.from({ length: config.authFailuresPerMinute + 5 }, () => outcomeOf(sut, presented, '10.0.0.3')),
    );
    expect(outcomes.every((o) => o.outcome === 'refused')).toBe(true);
    expect(asked.lookUp).toHaveLength(1);
  });

  it('answers a cached key synchronously, without asking for the address', () => {
    const { sut, known } = authenticatorWith(() => Promise.resolve(key));
    const presented = generateApiKey();
    known.set(digestApiKey(presented), key);
    expect(
      sut.authenticate(`Bearer ${presented}`, () => {
        throw new Error('address asked for');
      }),
    ).toEqual({ outcome: 'authenticated', key });
  });

  it('refuses what cannot be a key without a lookup, and counts it against the address', async () => {
    const { sut, asked } = authenticatorWith(() => Promise.resolve(key));
    await expect(sut.authenticate('Bearer short', () => '10.0.0.4')).resolves.toEqual({ outcome: 'refused' });
    await expect(sut.authenticate(`Bearer ${'x'.repeat(257)}`, () => '10.0.0.4')).resolves.toEqual({
      outcome: 'refused',
    });
    expect(asked.lookUp).toEqual([]);
  });

  it('a request whose key is not cached parses and digests it once, and asks the cache once (through the strategy)', async () => {
    const { sut, asked } = authenticatorWith(() => Promise.resolve(key));
    const strategy = new ApiKeyStrategy(sut);
    const presented = generateApiKey();
    const hashes = jest.spyOn(crypto, 'hash');
    try {
      const user = await strategy.validate({
        headers: { authorization: `Bearer ${presented}` },
        ip: '10.0.0.5',
      } as Request);
      expect(user).toEqual(key);
      expect(hashes).toHaveBeenCalledTimes(1);
    } finally {
      hashes.mockRestore();
    }
    expect(asked.cached).toEqual([digestApiKey(presented)]);
    expect(asked.lookUp).toEqual([digestApiKey(presented)]);
  });
});
