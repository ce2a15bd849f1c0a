/** The first retry waits about this long, and no wait is shorter (docs/contract.md §16: 1 s to 5 min). */
export const BACKOFF_MIN_MS = 1_000;
/** No wait is longer, a receiver's Retry-After included. */
export const BACKOFF_MAX_MS = 5 * 60_000;

/**
 * How long to wait before retry number `attempt` (1 for the first): exponential backoff with full
 * jitter (a uniform draw up to the exponential ceiling, AWS's "full jitter"), so destinations that
 * failed together do not retry together; never below 1 s nor above 5 min. A `Retry-After` from the
 * receiver is honoured as given (within the same bounds).
 */
export function retryDelay(attempt: number, retryAfterMs: number | null, random: () => number = Math.random): number {
  if (retryAfterMs !== null) return Math.min(BACKOFF_MAX_MS, Math.max(BACKOFF_MIN_MS, retryAfterMs));
  const ceiling = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.min(attempt, 30));
  return BACKOFF_MIN_MS + Math.floor(random() * (ceiling - BACKOFF_MIN_MS));
}
