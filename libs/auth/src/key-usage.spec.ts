import type { ApiKeysRepository } from '@app/database';
import { KeyUsage, LAST_USED_INTERVAL_MS } from './key-usage';

/** KeyUsage over a table that records the UPDATEs it is sent (e2e: test/accounts-keys.e2e-spec.ts reads lastUsedAt back). */
describe('KeyUsage', () => {
  let writes: string[][];
  let failing: boolean;
  let sut: KeyUsage;
  beforeEach(() => {
    writes = [];
    failing = false;
    const table = {
      touch: (ids: readonly string[]) => {
        if (failing) return Promise.reject(new Error('connection terminated'));
        writes.push([...ids]);
        return Promise.resolve();
      },
    } as unknown as ApiKeysRepository;
    sut = new KeyUsage(table);
  });
  afterEach(async () => {
    await sut.onApplicationShutdown();
  });

  it('writes each key at most once a minute, every due key in one statement', async () => {
    const now = 1_000_000;
    for (let i = 0; i < 1000; i++) sut.noteUse(i % 2 === 0 ? 'key_a' : 'key_b');
    await sut.flush(now);
    expect(writes).toEqual([['key_a', 'key_b']]);
    sut.noteUse('key_a');
    await sut.flush(now + LAST_USED_INTERVAL_MS - 1);
    expect(writes).toHaveLength(1);
    sut.noteUse('key_a');
    await sut.flush(now + LAST_USED_INTERVAL_MS);
    expect(writes).toEqual([['key_a', 'key_b'], ['key_a']]);
  });

  it('writes on its own a second after the first use, off the request', async () => {
    jest.useFakeTimers();
    try {
      sut.noteUse('key_a');
      expect(writes).toEqual([]);
      await jest.advanceTimersByTimeAsync(1_000);
      expect(writes).toEqual([['key_a']]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('a failed write is dropped without throwing, and the next use tries again', async () => {
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    failing = true;
    sut.noteUse('key_a');
    await expect(sut.flush(0)).resolves.toBeUndefined();
    failing = false;
    sut.noteUse('key_a');
    await sut.flush(1);
    expect(writes).toEqual([['key_a']]);
    warn.mockRestore();
  });
});
