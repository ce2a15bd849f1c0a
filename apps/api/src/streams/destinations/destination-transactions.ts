import { Injectable } from '@nestjs/common';
import { AuthenticatedKey, lockActiveCaller, manageableAccount, mayManage } from '@app/auth';
import { ACCOUNT_ID, AppError, DESTINATION_ID } from '@app/common';
import {
  AccountRow,
  AccountsRepository,
  ApiKeysRepository,
  AuditAction,
  AuditTrail,
  Db,
  DestinationRow,
  DestinationsRepository,
  keyActor,
  TransactionRunner,
} from '@app/database';
import { DeliveryEngine } from '../delivery/delivery-engine';

/** What a change of destinations works with, inside its transaction. */
export interface DestinationTx {
  tx: Db;
  account: AccountRow;
  /** Appends `action` on `destinationId` to the account's `_audit` chain, in this transaction. */
  record: (action: AuditAction, destinationId: string, context: Record<string, unknown>) => Promise<void>;
}

/**
 * Tenancy for destinations, exactly as for keys (docs/contract.md §12): an operator manages every
 * account's, an admin its own account's (`mayManage`); any other account, an unknown one, or a
 * destination of another account is a 404. A change locks the account's row, then re-checks the
 * calling key from the database (lockActiveCaller: a key revoked a moment ago cannot change
 * anything), then locks the destination, and records itself in `_audit` in the same transaction.
 */
@Injectable()
export class DestinationTransactions {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly accounts: AccountsRepository,
    private readonly apiKeys: ApiKeysRepository,
    private readonly destinations: DestinationsRepository,
    private readonly audit: AuditTrail,
    private readonly engine: DeliveryEngine,
  ) {}

  /** The account, for a read by `caller`. */
  async readable(caller: AuthenticatedKey, accountId: string): Promise<AccountRow> {
    return manageableAccount(caller, accountId, (id) => this.accounts.findById(id));
  }

  /** The destination, for a read by `caller`. */
  async destination(caller: AuthenticatedKey, accountId: string, destinationId: string): Promise<DestinationRow> {
    const account = await this.readable(caller, accountId);
    return (
      (await this.find(account.id, destinationId, this.transactions.pool, false)) ?? destinationNotFound(destinationId)
    );
  }

  /** `work` in a transaction holding the account's lock, the caller re-checked. */
  async inAccount<T>(caller: AuthenticatedKey, accountId: string, work: (c: DestinationTx) => Promise<T>): Promise<T> {
    if (!ACCOUNT_ID.test(accountId) || !mayManage(caller, accountId)) notFound(`Account ${accountId}`);
    const result = await this.transactions.run(async (tx) => {
      const account = (await this.accounts.lockById(accountId, tx)) ?? notFound(`Account ${accountId}`);
      const by = await lockActiveCaller(this.apiKeys, caller, tx);
      if (!mayManage(by, account.id)) notFound(`Account ${accountId}`);
      const record = (action: AuditAction, destinationId: string, context: Record<string, unknown>) =>
        this.audit.record(account.id, [{ actor: keyActor(by.keyId), action, resource: destinationId, context }], tx);
      return work({ tx, account, record });
    });
    // This instance's engine claims a new destination, or ends a delivery the change made stale, now.
    this.engine.poke();
    return result;
  }

  /** `work` on the destination, its row locked too. */
  async onDestination<T>(
    caller: AuthenticatedKey,
    accountId: string,
    destinationId: string,
    work: (c: DestinationTx, destination: DestinationRow) => Promise<T>,
  ): Promise<T> {
    return this.inAccount(caller, accountId, async (c) => {
      const found = await this.find(c.account.id, destinationId, c.tx, true);
      return work(c, found ?? destinationNotFound(destinationId));
    });
  }

  private async find(accountId: string, destinationId: string, db: Db, lock: boolean): Promise<DestinationRow | null> {
    return DESTINATION_ID.test(destinationId)
      ? this.destinations.findInAccount(accountId, destinationId, db, lock)
      : null;
  }
}

function notFound(what: string): never {
  throw AppError.notFound(what);
}

const destinationNotFound = (id: string): never => notFound(`Destination ${id}`);
