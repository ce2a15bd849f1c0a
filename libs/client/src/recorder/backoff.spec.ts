import { backoffCeiling, fullJitterDelay, retryDelay } from './backoff';

describe('backoff: exponential with full jitter, Retry-After as a floor', () => {
  const policy = { baseMs: 100, capMs: 5_000 };

  it('doubles the ceiling each attempt up to the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 10, 100, 5000].map((n) => backoffCeiling(n, policy))).toEqual([
      100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000, 5000,
    ]);
  });

  it('waits a uniformly drawn time below the ceiling', () => {
    expect(fullJitterDelay(3, policy, () => 0)).toBe(0);
    expect(fullJitterDelay(3, policy, () => 0.5)).toBe(400);
    expect(fullJitterDelay(3, policy, () => 0.999999)).toBe(799);
  });

  it('spreads many clients over the whole window (full jitter, not equal jitter)', () => {
    const draws = Array.from({ length: 2000 }, () => fullJitterDelay(4, policy));
    expect(Math.min(...draws)).toBeLessThan(160);
    expect(Math.max(...draws)).toBeGreaterThan(1440);
    expect(draws.every((d) => d >= 0 && d < 1600)).toBe(true);
  });

  it('never waits less than the Retry-After the service sent', () => {
    expect(retryDelay(0, 2, policy, () => 0.5)).toBe(2000);
    expect(retryDelay(6, 1, policy, () => 0.9)).toBe(4500);
    expect(retryDelay(0, null, policy, () => 0.5)).toBe(50);
  });
});
