import { EventRecord } from '@app/database';

/** One validated event waiting to be appended. */
export interface AppendRequest {
  accountId: string;
  chainName: string;
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
  /**
   * With an Idempotency-Key: the key, the token of this request's claim on it, and how to build
   * the response stored under it in the event's own transaction (the same object then answers
   * the request).
   */
  idempotency: { key: string; token: string; respond: (event: EventRecord) => unknown } | null;
}

/** A committed event, and for a keyed request the response stored with it. */
export interface Appended {
  event: EventRecord;
  response?: unknown;
}
