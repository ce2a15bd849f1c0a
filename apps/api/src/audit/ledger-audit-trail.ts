import { Injectable } from '@nestjs/common';
import { AUDIT_CHAIN, AuditEntry, AuditTrail, Db, TransactionRunner } from '@app/database';
import { ChainLedger } from '../events/append/chain-ledger';

/**
 * The service's record of itself (docs/contract.md §12): entries become events of the account's `_audit`
 * chain through the one append path (ChainLedger: positions, hashes, Merkle tree, chain locks), in
 * the transaction of the change they describe. `_audit` is then read, verified, proven and
 * exported like any chain; clients cannot append to it (names starting with `_` are refused).
 */
@Injectable()
export class LedgerAuditTrail extends AuditTrail {
  constructor(
    private readonly ledger: ChainLedger,
    private readonly transactions: TransactionRunner,
  ) {
    super();
  }

  async recordAlone(accountId: string, entries: readonly AuditEntry[]): Promise<void> {
    await this.transactions.run((tx) => this.record(accountId, entries, tx));
  }

  async record(accountId: string, entries: readonly AuditEntry[], tx: Db): Promise<void> {
    await this.ledger.append(
      entries.map((entry) => ({ accountId, chainName: AUDIT_CHAIN, ...entry })),
      tx,
    );
  }
}
