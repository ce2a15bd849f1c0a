/** The longest wait a receiver's Retry-After may ask for (docs/contract.md §16: backoff up to 5 min). */
export const MAX_RETRY_AFTER_MS = 5 * 60 * 1000;

/** Retry-After in milliseconds (RFC 9110 §10.2.3: delay-seconds or an HTTP date), capped; null if absent or bad. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  let ms: number;
  if (/^\d+$/.test(text)) ms = Number(text) * 1000;
  else {
    const at = /^[A-Za-z]{3}, /.test(text) ? Date.parse(text) : NaN; // IMF-fixdate, as RFC 9110 requires senders to use
    if (Number.isNaN(at)) return null;
    ms = Math.max(0, at - now);
  }
  return Math.min(ms, MAX_RETRY_AFTER_MS);
}
