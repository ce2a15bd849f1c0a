import { BACKOFF_MAX_MS, BACKOFF_MIN_MS, retryDelay } from './backoff';

describe('retryDelay', () => {
  it('draws uniformly between 1 s and an exponential ceiling (full jitter)', () => {
    expect(retryDelay(1, null, () => 0)).toBe(BACKOFF_MIN_MS);
    expect(retryDelay(1, null, () => 0.999999)).toBeLessThan(2_000);
    expect(retryDelay(3, null, () => 0.5)).toBe(1_000 + 3_500);
    expect(retryDelay(4, null, () => 0.999999)).toBeGreaterThan(15_000);
  });

  it('never waits more than 5 minutes, however many failures', () => {
    expect(retryDelay(100, null, () => 0.999999)).toBeLessThanOrEqual(BACKOFF_MAX_MS);
    expect(retryDelay(9, null, () => 1)).toBe(BACKOFF_MAX_MS);
  });

  it("honours a receiver's Retry-After, within 1 s to 5 min", () => {
    expect(retryDelay(1, 7_000, () => 0)).toBe(7_000);
    expect(retryDelay(1, 0, () => 0)).toBe(BACKOFF_MIN_MS);
    expect(retryDelay(1, 3_600_000, () => 0)).toBe(BACKOFF_MAX_MS);
  });
});
