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
   * With an Idempotency-Key: the key, the digest of the request, and how to build the response (its
   * JSON text) stored under the key in the events' own transaction (the same text then answers the
   * request). The events of one batch share one such object: one key, one response built from all
   * of them in request order.
   */
  idempotency: Idempotency | null;
}

export interface Idempotency {
  key: string;
  /** IdempotencyService.digest of the request: stored with the response, compared by later requests. */
  digest: string;
  /** The response body as JSON text: stored as is, sent as is. */
  respond: (events: EventRecord[]) => string;
}

/** A committed event, and for a keyed request the response (JSON text) stored with it. */
export interface Appended {
  event: EventRecord;
  response?: string;
}

/**
 * A keyed request whose key another request already answered (docs/contract.md §7): that answer, JSON
 * text, replayed as is; nothing appended.
 */
export class Replay {
  constructor(readonly json: string) {}
}
