import type { Writable } from 'node:stream';

/** What ended a wait for a writable's buffer to empty. */
export type DrainOutcome = 'drained' | 'closed' | 'stalled';

/** The part of a writable (an HTTP response) a wait for `drain` needs. */
export type Drainable = Pick<Writable, 'destroyed' | 'once' | 'removeListener'>;

/**
 * Waits until `out` has written out what it buffered ('drain'), it closed (or `signal` aborted), or `stallMs` passed
 * without its taking everything: a consumer that stopped reading. A writer that waits for this
 * after each write that returned false holds at most its last chunk beyond the buffer's mark, and
 * writes again as soon as the reader has taken the rest, not at some later tick.
 */
export function drained(out: Drainable, stallMs: number, signal?: AbortSignal): Promise<DrainOutcome> {
  if (out.destroyed || signal?.aborted) return Promise.resolve('closed');
  return new Promise((resolve) => {
    const settle = (outcome: DrainOutcome) => () => {
      clearTimeout(timer);
      out.removeListener('drain', onDrain);
      out.removeListener('close', onClose);
      signal?.removeEventListener('abort', onClose);
      resolve(outcome);
    };
    const onDrain = settle('drained');
    const onClose = settle('closed');
    const timer = setTimeout(settle('stalled'), stallMs);
    out.once('drain', onDrain);
    out.once('close', onClose);
    signal?.addEventListener('abort', onClose, { once: true });
  });
}
