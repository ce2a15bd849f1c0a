import { ExitCode } from '../exit-code';

/** How one batch ended: appended (or replayed from an earlier run), or refused for naming items. */
export type BatchOutcome = { kind: 'appended'; replayed: boolean } | { kind: 'rejected'; items: Map<number, string[]> };

/** Something that stops the whole ingest: bad key, wrong URL, a server that stays away. */
export class IngestStopped extends Error {
  override readonly name = 'IngestStopped';
  constructor(
    message: string,
    readonly exitCode: ExitCode = ExitCode.BadInput,
  ) {
    super(message);
  }
}

export interface SenderOptions {
  url: string;
  key: string;
  sleep: (ms: number) => Promise<void>;
  /** Nothing went through yet in this run (see FIRST_CONTACT_ATTEMPTS). */
  firstContact: () => boolean;
  /** Told before each wait, for the progress line. */
  onRetry?: (reason: string, ms: number) => void;
}

/**
 * Network errors, 5xx, 429 and 409 (an earlier run's request still in flight) are retried: the
 * backoff of 10 attempts adds up to about 2 minutes, past the 60 s after which the service takes
 * over the claim of a request that died.
 */
export const MAX_ATTEMPTS = 10;
/** Until a first batch has gone through, a server that cannot be reached at all is a wrong --url: fail fast. */
export const FIRST_CONTACT_ATTEMPTS = 3;
const REQUEST_TIMEOUT_MS = 120_000;
/** Longest wait we accept from Retry-After, and the ceiling of the backoff. */
const MAX_RETRY_AFTER_MS = 300_000;
const MAX_BACKOFF_MS = 30_000;

interface ErrorBody {
  error?: { code?: string; message?: string; details?: { fields?: { field?: string; message?: string }[] } };
}

/** POST /v1/events/batch with retries; the Idempotency-Key makes every retry safe. */
export async function sendBatch(body: string, idempotencyKey: string, options: SenderOptions): Promise<BatchOutcome> {
  for (let attempt = 1; ; attempt++) {
    let retry: { reason: string; ms: number | null; network?: true };
    try {
      const response = await fetch(options.url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${options.key}`,
          'content-type': 'application/json',
          'idempotency-key': idempotencyKey,
        },
        body,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      if (response.status === 200 || response.status === 201)
        return { kind: 'appended', replayed: response.headers.get('idempotent-replayed') === 'true' };
      const error = parseError(text);
      const what = `HTTP ${response.status}${error?.code ? ` ${error.code}` : ''}${error?.message ? `: ${error.message}` : ''}`;
      const rejected = response.status === 400 ? rejectedItems(error) : null;
      if (rejected) return { kind: 'rejected', items: rejected };
      if (!isRetryable(response.status)) throw new IngestStopped(`${options.url} answered ${what}`);
      retry = { reason: what, ms: retryAfterMs(response.headers.get('retry-after')) };
    } catch (error) {
      if (error instanceof IngestStopped) throw error;
      retry = { reason: networkReason(error), ms: null, network: true };
    }
    const limit = retry.network && options.firstContact() ? FIRST_CONTACT_ATTEMPTS : MAX_ATTEMPTS;
    if (attempt >= limit)
      throw new IngestStopped(`${options.url}: gave up after ${attempt} attempts, last: ${retry.reason}`);
    const ms = retry.ms ?? Math.min(MAX_BACKOFF_MS, 500 * 2 ** (attempt - 1));
    options.onRetry?.(retry.reason, ms);
    await options.sleep(ms);
  }
}

function isRetryable(status: number): boolean {
  return status === 409 || status === 429 || status >= 500;
}

/** Retry-After as delta-seconds or an HTTP date (RFC 9110 §10.2.3); null when absent or unreadable. */
export function retryAfterMs(value: string | null, now = Date.now()): number | null {
  if (value === null) return null;
  const ms = /^\d+$/.test(value.trim()) ? Number(value.trim()) * 1000 : Date.parse(value) - now;
  return Number.isFinite(ms) ? Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms)) : null;
}

function parseError(text: string): ErrorBody['error'] | undefined {
  try {
    return (JSON.parse(text) as ErrorBody | null)?.error;
  } catch {
    return undefined;
  }
}

/** A 400 naming items (`events[3].actor`, `events[3]`): item index → messages. Null if it names anything else. */
function rejectedItems(error: ErrorBody['error']): Map<number, string[]> | null {
  const fields = error?.code === 'VALIDATION_ERROR' ? (error.details?.fields ?? []) : [];
  const items = new Map<number, string[]>();
  for (const { field = '', message = '' } of fields) {
    const match = /^events\[(\d+)\](.*)$/.exec(field);
    if (!match) return null;
    const index = Number(match[1]);
    const member = match[2]!.replace(/^\./, '') || 'event';
    items.set(index, [...(items.get(index) ?? []), `${member}: ${message}`]);
  }
  return items.size > 0 ? items : null;
}

function networkReason(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message ?? String(error);
}
