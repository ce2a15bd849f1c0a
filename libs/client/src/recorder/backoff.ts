/**
 * Exponential backoff with full jitter (AWS Architecture Blog, "Exponential Backoff And Jitter"):
 * attempt n waits a uniformly random time in [0, min(cap, base · 2^n)), so that many clients
 * retrying one outage spread out instead of arriving together. A Retry-After the service sent is
 * a floor: the wait is never shorter than what it asked for.
 */
export interface BackoffPolicy {
  /** The ceiling of the first retry's wait. */
  baseMs: number;
  /** The largest ceiling any retry may wait. */
  capMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 100, capMs: 30_000 };

/** The wait before retry `attempt` (0 for the first), `random` in [0, 1). */
export function fullJitterDelay(
  attempt: number,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  return Math.floor(random() * backoffCeiling(attempt, policy));
}

/** min(cap, base · 2^attempt), without overflowing for large attempts. */
export function backoffCeiling(attempt: number, policy: BackoffPolicy = DEFAULT_BACKOFF): number {
  const exponent = Math.min(Math.max(0, attempt), 52);
  return Math.min(policy.capMs, policy.baseMs * 2 ** exponent);
}

/** The wait before retry `attempt`, at least `retryAfterSeconds` when the answer named one. */
export function retryDelay(
  attempt: number,
  retryAfterSeconds: number | null,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
  random: () => number = Math.random,
): number {
  const jittered = fullJitterDelay(attempt, policy, random);
  return retryAfterSeconds === null ? jittered : Math.max(retryAfterSeconds * 1000, jittered);
}
