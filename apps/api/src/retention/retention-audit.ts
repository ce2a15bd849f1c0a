import { Injectable } from '@nestjs/common';
import { AuditEntry, AuditTrail, Db, keyActor } from '@app/database';

/** The actor of a prune: the service's retention sweep, not a key. */
export const RETENTION_ACTOR = 'service:retention';

/**
 * The three `_audit` appends of retention (docs/contract.md §12, §14), each with one call site:
 * `retentionChanged`, `legalHoldChanged` (RetentionService) and `pruned` (RetentionSweeper), each
 * in the transaction of the change it describes (`tx`), through the one AuditTrail.
 */
@Injectable()
export class RetentionAudit {
  constructor(private readonly trail: AuditTrail) {}

  retentionChanged(accountId: string, keyId: string, resource: string, days: number | null, tx: Db): Promise<void> {
    return this.write(
      accountId,
      { actor: keyActor(keyId), action: 'retention.changed', resource, context: { days } },
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
      { actor: keyActor(keyId), action: 'legal_hold.changed', resource, context: change },
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
      { actor: RETENTION_ACTOR, action: 'retention.pruned', resource: chainId, context: change },
      tx,
    );
  }

  private write(accountId: string, entry: AuditEntry, tx: Db): Promise<void> {
    return this.trail.record(accountId, [entry], tx);
  }
}
