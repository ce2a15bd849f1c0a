import { Injectable } from '@nestjs/common';
import { ulid } from 'ulid';
import { AuthenticatedKey, lockActiveCaller, manageableAccount, seesEveryAccount } from '@app/auth';
import { ACCOUNTS_CURSOR, AppError, SYSTEM_ACCOUNT } from '@app/common';
import {
  AccountRow,
  AccountsRepository,
  ApiKeysRepository,
  AuditTrail,
  ChainsRepository,
  keyActor,
  TransactionRunner,
} from '@app/database';
import { toAccountView } from './account.mapper';
import { AccountView } from './dto/account.view';
import { CreateAccountDto } from './dto/create-account.dto';
import { ListAccountsQuery } from './dto/list-accounts.query';
import { MeView } from './dto/me.view';

/**
 * Accounts over HTTP (docs/contract.md §12): an operator sees and creates every account, an admin sees its
 * own (libs/auth keys/access.ts decides). Counts come from the chain heads and the keys table,
 * never from a count over events.
 */
@Injectable()
export class AccountsService {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly accounts: AccountsRepository,
    private readonly chains: ChainsRepository,
    private readonly apiKeys: ApiKeysRepository,
    private readonly audit: AuditTrail,
  ) {}

  async me(key: AuthenticatedKey): Promise<{ data: MeView }> {
    const account = await this.accounts.findById(key.accountId);
    if (!account) throw AppError.notFound(`Account ${key.accountId}`);
    return { data: { accountId: account.id, accountName: account.name, keyId: key.keyId, scopes: [...key.scopes] } };
  }

  /** An operator: every account, oldest first, in pages. An admin: a list of its own account. */
  async list(
    caller: AuthenticatedKey,
    query: ListAccountsQuery,
  ): Promise<{ data: AccountView[]; nextCursor?: string }> {
    if (!seesEveryAccount(caller)) {
      const own = await this.accounts.findById(caller.accountId);
      return { data: await this.views(own ? [own] : []) };
    }
    const cursor = query.cursor ? ACCOUNTS_CURSOR.decode(caller.accountId, query.cursor) : undefined;
    const rows = await this.accounts.list(query.limit + 1, cursor);
    const page = ACCOUNTS_CURSOR.page(caller.accountId, rows, query.limit, (a) => ({
      time: a.createdAt.toISOString(),
      id: a.id,
    }));
    return { data: await this.views(page.items), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  /** 404 for an account the caller may not manage, exactly as for one that does not exist. */
  async get(caller: AuthenticatedKey, accountId: string): Promise<{ data: AccountView }> {
    const account = await manageableAccount(caller, accountId, (id) => this.accounts.findById(id));
    const [view] = await this.views([account]);
    return { data: view! };
  }

  /**
   * Operator only (the route's @RequireScopes(OPERATOR), then the calling key re-checked in the transaction, not from the
   * cache: docs/contract.md §12); recorded in the `_audit` chain of `system`, in the same transaction.
   */
  async create(caller: AuthenticatedKey, dto: CreateAccountDto): Promise<{ data: AccountView }> {
    const account = await this.transactions.run(async (tx) => {
      const by = await lockActiveCaller(this.apiKeys, caller, tx);
      if (!seesEveryAccount(by)) throw new AppError('FORBIDDEN', 'Only an operator key creates accounts.', {});
      const created = await this.accounts.create(`acc_${ulid()}`, dto.name, tx);
      if (!created) throw new AppError('CONFLICT', `The account name '${dto.name}' is taken.`, { name: dto.name });
      const system = await this.accounts.ensureByName(SYSTEM_ACCOUNT, `acc_${ulid()}`, tx);
      const entry = { actor: keyActor(by.keyId), resource: created.id, context: { name: created.name } };
      await this.audit.record(system, [{ ...entry, action: 'account.created' }], tx);
      return created;
    });
    return { data: toAccountView(account, { eventCount: 0, chainCount: 0, lastEventAt: null, keyCount: 0 }) };
  }

  private async views(accounts: readonly AccountRow[]): Promise<AccountView[]> {
    if (accounts.length === 0) return [];
    const ids = accounts.map((a) => a.id);
    const [totals, keys] = await Promise.all([
      this.chains.totalsByAccount(ids),
      this.apiKeys.countActiveByAccount(ids),
    ]);
    return accounts.map((a) =>
      toAccountView(a, {
        ...(totals.get(a.id) ?? { eventCount: 0, chainCount: 0, lastEventAt: null }),
        keyCount: keys.get(a.id) ?? 0,
      }),
    );
  }
}
