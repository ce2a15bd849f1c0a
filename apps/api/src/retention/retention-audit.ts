import { Injectable, Logger } from '@nestjs/common';
import { Db } from '@app/database';

/** What one of these changes appends to the account's `_audit` chain (contract §12, §14). */
export interface RetentionAuditEntry {
  /** `key:<keyId>` of the key that made the change; `service:retention` for a prune. */
  actor: string;
  action: 'retention.changed' | 'legal_hold.changed' | 'retention.pruned';
  /** The chain's or the account's id. */
  resource: string;
  /** The change (never a secret). */
  context: Record<string, unknown>;
}

/**
 * The three `_audit` appends of retention (contract §14), each with ONE call site:
 * `retentionChanged`, `legalHoldChanged` and `pruned`, called by RetentionService and
 * RetentionSweeper inside the transaction of the change they describe (`tx`).
 *
 * MERGE with the `accounts` branch: its `AuditTrail` (libs/auth, `record(accountId, entries, tx)`,
 * written by `LedgerAuditTrail` through ChainLedger into the `_audit` chain) takes exactly these
 * entries. Inject it here and replace `write` with `this.trail.record(accountId, [entry], tx)`;
 * nothing else changes. Until then (main has no `_audit` chain) each entry is a structured log line.
 */
@Injectable()
export class RetentionAudit {
  private readonly logger = new Logger('Retention');

  retentionChanged(accountId: string, keyId: string, resource: string, days: number | null, tx: Db): Promise<void> {
    return this.write(
      accountId,
      { actor: `key:${keyId}`, action: 'retention.changed', resource, context: { days } },
      tx,
    );
  }

  legalHoldChanged(
    accountId: string,
    keyId: string,
    resource: string,
    change: { hold: boolean; reason: string | null },
    tx: Db,
  ): Promise<void> {
    return this.write(
      accountId,
      { actor: `key:${keyId}`, action: 'legal_hold.changed', resource, context: change },
      tx,
    );
  }

  pruned(
    accountId: string,
    chainId: string,
    change: { firstPrunedPosition: number; lastPrunedPosition: number; reason: string },
    tx: Db,
  ): Promise<void> {
    return this.write(
      accountId,
      { actor: 'service:retention', action: 'retention.pruned', resource: chainId, context: change },
      tx,
    );
  }

  /** Until the merge: a log line naming the change, without its context (a hold's reason is request text, never logged). */
  private write(accountId: string, entry: RetentionAuditEntry, _tx: Db): Promise<void> {
    this.logger.log({ msg: entry.action, accountId, actor: entry.actor, resource: entry.resource });
    return Promise.resolve();
  }
}
