import { safeMessage } from '../delivery-failure';
import type { Delivery, FailureAction, SinkTarget } from '../sink';
import type { HttpAnswer } from './http-post';
import { retryAfterMs } from './retry-after';

/** OTLP/HTTP: the only statuses a client retries (OTLP specification, "Retryable Response Codes"). */
const OTLP_RETRYABLE = new Set([429, 502, 503, 504]);

/**
 * docs/contract.md §16 "Failures": 2xx acknowledges; 410 disables; any other status is retried (408, 429
 * and 5xx because they pass, other 4xx because a fixed credential resumes delivery); a 3xx is not
 * followed, so it is a failure too. OTLP retries only what its specification calls retryable and
 * pauses on any other answer (410 and 3xx included), so its batch waits for a person.
 */
export function classifyAnswer(target: SinkTarget, answer: HttpAnswer): Delivery {
  const { status } = answer;
  if (status >= 200 && status < 300) return { ok: true };
  return {
    ok: false,
    status,
    message: safeMessage(target, describeAnswer(answer)),
    action: actionFor(target, status),
    retryAfterMs: retryAfterMs(answer.headers['retry-after']),
  };
}

function actionFor(target: SinkTarget, status: number): FailureAction {
  if (target.kind === 'otlp') return OTLP_RETRYABLE.has(status) ? 'retry' : 'pause';
  return status === 410 ? 'disable' : 'retry';
}

function describeAnswer({ status, body }: HttpAnswer): string {
  const head = status >= 300 && status < 400 ? `HTTP ${status}: redirect not followed` : `HTTP ${status}`;
  const text = body.trim();
  return text ? `${head}: ${text}` : head;
}
