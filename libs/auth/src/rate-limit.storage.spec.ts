import { ThrottlerStorageService } from '@nestjs/throttler';
import { RateLimitStorage } from './rate-limit.storage';

/** The same answers as @nestjs/throttler's own storage, hit by hit, on one clock. */
describe('RateLimitStorage', () => {
  afterEach(() => jest.useRealTimers());

  it.each([
    ['limit 5, ttl 1 s, block 1 s', 5, 1000, 1000],
    ['limit 3, ttl 2 s, block 5 s', 3, 2000, 5000],
  ])('counts, blocks and unblocks like ThrottlerStorageService (%s)', async (_name, limit, ttl, block) => {
    jest.useFakeTimers({ now: new Date('2026-11-23T00:00:00Z') });
    const theirs = new ThrottlerStorageService();
    const ours = new RateLimitStorage();
    // Bursts, pauses shorter and longer than ttl and block, two keys.
    const steps = [
      0, 0, 0, 50, 50, 100, 100, 100, 300, 700, 10, 10, 990, 5, 5, 5, 5, 5, 2500, 0, 0, 0, 0, 0, 0, 6000, 1,
    ];
    const blocked: boolean[] = [];
    for (const [i, advance] of steps.entries()) {
      await jest.advanceTimersByTimeAsync(advance);
      const key = i % 4 === 3 ? 'key:b' : 'key:a';
      const record = await ours.increment(key, ttl, limit, block, 'default');
      expect(record).toEqual(await theirs.increment(key, ttl, limit, block, 'default'));
      blocked.push(record.isBlocked);
    }
    expect(blocked.indexOf(true)).toBeGreaterThan(0); // blocked at some point,
    expect(blocked.lastIndexOf(false)).toBeGreaterThan(blocked.indexOf(true)); // then let through again
    theirs.onApplicationShutdown();
  });
});
