import { Injectable } from '@nestjs/common';
import { AUDIT_CHAIN, AuditTrail, keyActor, OperatorReadsRepository, TransactionRunner } from '@app/database';

/** How long one `operator.read` entry stands for a key's reads of an account (docs/contract.md §12). */
export const OPERATOR_READ_INTERVAL_MS = 60 * 60 * 1000;
/** (key, account) pairs remembered; beyond, the memory starts again (the database still decides). */
const REMEMBERED_MAX = 10_000;

/**
 * Records an operator's reads of an account in that account's `_audit` chain as `operator.read`
 * (docs/contract.md §12), at most once an hour per key and account, so a tenant sees who looked. The
 * database decides, for every instance sharing it: under a lock per key and account, the entry is
 * appended only when the chain holds none of the last hour (OperatorReadsRepository). What this
 * instance learnt is remembered in front of it, and concurrent reads of one pair wait for one
 * decision, so a flood of reads costs one transaction an hour, not one a read. A read waits for its
 * entry to commit: when it cannot be recorded, it is not served.
 */
@Injectable()
export class OperatorReadLog {
  /** When the last entry of each `key/account` was made, as far as this instance knows. */
  private readonly recorded = new Map<string, number>();
  /** Decisions in flight, by `key/account`. */
  private readonly deciding = new Map<string, Promise<void>>();

  constructor(
    private readonly transactions: TransactionRunner,
    private readonly reads: OperatorReadsRepository,
    private readonly trail: AuditTrail,
  ) {}

  /** Resolves once `keyId`'s read of `accountId` through `route` (a route pattern, never a value) is on record. */
  record(keyId: string, accountId: string, route: string): Promise<void> {
    const pair = `${keyId}/${accountId}`;
    const at = this.recorded.get(pair);
    if (at !== undefined && Date.now() - at < OPERATOR_READ_INTERVAL_MS) return Promise.resolve();
    let decision = this.deciding.get(pair);
    if (decision === undefined) {
      decision = this.decide(pair, keyId, accountId, route).finally(() => this.deciding.delete(pair));
      this.deciding.set(pair, decision);
    }
    return decision;
  }

  private async decide(pair: string, keyId: string, accountId: string, route: string): Promise<void> {
    const actor = keyActor(keyId);
    const at = await this.transactions.run(async (tx) => {
      await this.reads.lock(accountId, keyId, tx);
      const now = Date.now();
      const since = new Date(now - OPERATOR_READ_INTERVAL_MS);
      const last = await this.reads.lastSince(accountId, AUDIT_CHAIN, actor, 'operator.read', since, tx);
      if (last !== null) return last.getTime();
      await this.trail.record(accountId, [{ actor, action: 'operator.read', resource: null, context: { route } }], tx);
      return now;
    });
    if (this.recorded.size >= REMEMBERED_MAX) this.recorded.clear();
    this.recorded.set(pair, at);
  }
}
