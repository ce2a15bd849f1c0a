import type { Db } from './transaction-runner';

/** What the service records about itself (docs/contract.md §12). */
export type AuditAction =
  | 'account.created'
  | 'key.created'
  | 'key.revoked'
  | 'key.rotated'
  | 'retention.changed'
  | 'legal_hold.changed'
  | 'retention.pruned'
  | 'export.created'
  | 'destination.created'
  | 'destination.changed'
  | 'destination.deleted'
  | 'destination.paused'
  | 'destination.resumed'
  | 'destination.replayed'
  | 'destination.disabled'
  | 'destination.gap'
  | 'erasure.done'
  /** An action schema version saved or deleted (docs/contract.md §19). */
  | 'schema.changed'
  /** An operator key read the account (docs/contract.md §12): at most once an hour per key and account. */
  | 'operator.read';

/** The reserved chain each account's own changes are appended to. */
export const AUDIT_CHAIN = '_audit';

export interface AuditEntry {
  /** `key:<keyId>` of the key that made the change. */
  actor: string;
  action: AuditAction;
  /** The object's id (null for an export and an operator's read). */
  resource: string | null;
  /** The change; never a secret. */
  context: Record<string, unknown> | null;
}

/** The actor of a change made with this key. */
export const keyActor = (keyId: string): string => `key:${keyId}`;

/**
 * Appends entries to an account's `_audit` chain through the service's one append path, inside
 * the transaction `tx` of the change they describe, so both commit or neither does. The API binds
 * it to its chain ledger (apps/api/src/audit); this port, beside the transactions it writes in,
 * keeps libs free of the app (libs/auth's KeysService records key changes through it).
 */
export abstract class AuditTrail {
  abstract record(accountId: string, entries: readonly AuditEntry[], tx: Db): Promise<void>;

  /** The same in a transaction of their own: for what changes nothing in the database (an export). */
  abstract recordAlone(accountId: string, entries: readonly AuditEntry[]): Promise<void>;
}
