import { EventRecord, EventSchemaRef } from '@app/database';

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
  /**
   * How the account's action schemas checked the event before it was queued (SchemaGate,
   * docs/contract.md §19); absent for the service's own `_audit` entries, which no schema checks.
   */
  schema?: SchemaCheck;
}

/** The outcome of an event's schema check, carried to its transaction. */
export interface SchemaCheck {
  /**
   * The account's schema generation the check used (its greatest action_schemas id). The append's
   * transaction reads the account's generation under its chains' locks: another one means a
   * version was saved since, and the append is refused with StaleSchemas, to be checked again.
   */
  generation: number;
  /** The version that checked the event and whether it held; null when no schema applies to its action. */
  ref: EventSchemaRef | null;
}

/**
 * An append whose events were checked against an older schema generation of their account than
 * the one its transaction found (rolled back, nothing written): EventsService checks them again
 * against the account's current schemas and queues them anew. `accounts` are the stale ones.
 */
export class StaleSchemas extends Error {
  constructor(readonly accounts: ReadonlySet<string>) {
    super(`action schemas changed meanwhile for ${accounts.size} account(s)`);
  }
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
