import { AddressNotAllowedError } from './outbound/address-policy';
import type { DeliveryFailure, SinkTarget } from './sink';

/** lastError's message, in characters (docs/contract.md §16: short). */
export const MAX_MESSAGE_LENGTH = 200;

/** A short, single-line message with no credential of `target` in it. */
export function safeMessage(target: SinkTarget, message: string): string {
  let text = message.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  for (const secret of credentialsOf(target)) text = text.split(secret).join('[redacted]');
  return text.length > MAX_MESSAGE_LENGTH ? `${text.slice(0, MAX_MESSAGE_LENGTH - 1)}…` : text;
}

/** Every value that must never appear in a message: secrets and custom header values (docs/contract.md §16). */
function credentialsOf(target: SinkTarget): string[] {
  const { webhookSecrets = [], token, apiKey } = target.secrets;
  const all = [...webhookSecrets, ...webhookSecrets.map((s) => s.replace(/^whsec_/, ''))];
  if (token) all.push(token);
  if (apiKey) all.push(apiKey);
  all.push(...Object.values(target.headers));
  // Also as a receiver may echo them inside JSON (escaped); short values too: a message that loses a few
  // letters to [redacted] is better than a header value shown in every later answer. Longest first.
  const forms = all.flatMap((value) => [value, JSON.stringify(value).slice(1, -1)]);
  return [...new Set(forms)].filter((value) => value.length > 0).sort((a, b) => b.length - a.length);
}

/** A failure with no HTTP status: a timeout, a network error, a refused address, an abort. */
export function networkFailure(target: SinkTarget, error: unknown): DeliveryFailure {
  return {
    ok: false,
    status: null,
    message: safeMessage(target, describe(error)),
    action: 'retry',
    retryAfterMs: null,
  };
}

/** "<code>: <message>" of a Node error (duck-typed: errors may come from another realm), our own errors' message as is. */
function describe(error: unknown): string {
  if (
    error instanceof AddressNotAllowedError ||
    error instanceof SinkTimeoutError ||
    error instanceof SinkAbortedError
  ) {
    return error.message;
  }
  if (typeof error !== 'object' || error === null) return 'network error';
  const { code, message } = error as { code?: unknown; message?: unknown };
  const text = typeof message === 'string' ? message : '';
  if (typeof code !== 'string' || code.startsWith('ERR_SINK_')) return text || 'network error';
  return text && !text.includes(code) ? `${code}: ${text}` : text || code;
}

/** Raised when timeoutSeconds passes: its message is lastError's. */
export class SinkTimeoutError extends Error {
  readonly code = 'ERR_SINK_TIMEOUT';

  constructor(seconds: number) {
    super(`timed out after ${seconds} s`);
    this.name = 'SinkTimeoutError';
  }
}

/** Raised when the engine's signal aborts an attempt (shutdown, pause). */
export class SinkAbortedError extends Error {
  readonly code = 'ERR_SINK_ABORTED';

  constructor() {
    super('aborted');
    this.name = 'SinkAbortedError';
  }
}

/**
 * Runs `attempt` under the engine's signal and a timeout of timeoutSeconds; the signal handed to
 * `attempt` fires on either, and the promise rejects with SinkAbortedError or SinkTimeoutError.
 */
export async function bounded<T>(
  target: SinkTarget,
  signal: AbortSignal,
  attempt: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  if (signal.aborted) throw new SinkAbortedError();
  const controller = new AbortController();
  let stop: (error: Error) => void = () => undefined;
  const stopped = new Promise<never>((_, reject) => (stop = reject));
  const fire = (error: Error) => {
    stop(error);
    controller.abort(error);
  };
  const onAbort = () => fire(new SinkAbortedError());
  const timer = setTimeout(() => fire(new SinkTimeoutError(target.timeoutSeconds)), target.timeoutSeconds * 1000);
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await Promise.race([attempt(controller.signal), stopped]);
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
  }
}
