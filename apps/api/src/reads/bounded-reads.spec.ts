import { AppConfig, AppError } from '@app/common';
import { Db, ReadReplica } from '@app/database';
import { BoundedReads } from './bounded-reads';

describe('BoundedReads', () => {
  const config = Object.assign(new AppConfig(), { readsPerAccount: 1, queryTimeoutSeconds: 2.5 });
  const timeouts: number[] = [];
  let outcome: () => Promise<unknown>;
  const transactions = {
    runBounded: (timeoutMs: number, work: (db: Db) => Promise<unknown>) => {
      timeouts.push(timeoutMs);
      return outcome().then(() => work({} as Db));
    },
  } as unknown as ReadReplica;
  const sut = new BoundedReads(config, transactions);

  it('runs the work under QUERY_TIMEOUT_SECONDS in milliseconds', async () => {
    outcome = () => Promise.resolve();
    await expect(sut.run('a', () => Promise.resolve('rows'))).resolves.toBe('rows');
    expect(timeouts).toEqual([2500]);
  });

  it('answers a statement cancelled by its timeout (57014) with 422 QUERY_TOO_EXPENSIVE, anything else as it is', async () => {
    outcome = () =>
      Promise.reject(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }));
    const error = await sut.run('a', () => Promise.resolve()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AppError);
    expect(error).toMatchObject({ code: 'QUERY_TOO_EXPENSIVE', details: { timeoutSeconds: 2.5 } });
    const other = Object.assign(new Error('deadlock'), { code: '40P01' });
    outcome = () => Promise.reject(other);
    await expect(sut.run('a', () => Promise.resolve())).rejects.toBe(other);
    expect(sut.inFlightOf('a')).toBe(0);
  });

  it('refuses a read beyond READS_PER_ACCOUNT with 429 and Retry-After, at once', async () => {
    const slot = sut.take('a');
    await expect(sut.run('a', () => Promise.resolve())).rejects.toMatchObject({
      code: 'RATE_LIMITED',
      details: { limit: 1 },
      headers: { 'Retry-After': '1' },
    });
    outcome = () => Promise.resolve();
    await expect(sut.run('b', () => Promise.resolve('other account'))).resolves.toBe('other account');
    slot.release();
  });
});
