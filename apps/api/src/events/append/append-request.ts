import { EventSchemaRef } from '@app/database';

/** One validated event waiting to be appended: what it brings to its row, as a plain record. */
export interface AppendRequest {
  accountId: string;
  chainName: string;
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
  /**
   * How the account's action schemas checked the event before it was queued (SchemaGate,
   * docs/contract.md §19); absent for the service's own `_audit` entries, which no schema checks.
   * Not part of what the client sent: the Idempotency-Key's digest leaves it out.
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
