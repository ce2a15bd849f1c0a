import { Injectable } from '@nestjs/common';
import { ACCOUNT_ID, AppError, CHAIN_ID } from '@app/common';
import { AccountSettingsRecord, AccountsRepository, ChainsRepository, TransactionRunner } from '@app/database';
import { AuthenticatedKey } from '@app/auth';
import { toChainView } from '../chains/chain.mapper';
import { ChainView } from '../chains/dto/chain.view';
import { AccountSettingsView } from './dto/account-settings.view';
import { LegalHoldDto, RetentionDto } from './dto/retention-settings.dto';
import { RetentionAudit } from './retention-audit';

/**
 * Retention and legal hold settings (contract §14): each change and its `_audit` entry in one
 * transaction. The answer is the updated chain status or account.
 *
 * Who may: contract §12 gives these routes to `admin` (its own account) and `operator` (any).
 * Until those scopes are merged (branch `accounts`), the route asks the `ingest` scope (the one
 * that writes to the account) and `accountOf` allows the key's own account only: another account
 * is a 404, like an unknown one. At the merge `accountOf` is where an operator gets every account.
 */
@Injectable()
export class RetentionService {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly chains: ChainsRepository,
    private readonly accounts: AccountsRepository,
    private readonly audit: RetentionAudit,
  ) {}

  async setChainRetention(
    key: AuthenticatedKey,
    chainId: string,
    { days }: RetentionDto,
  ): Promise<{ data: ChainView }> {
    return this.changeChain(key, chainId, async (tx) => {
      const found = await this.chains.setRetention(key.accountId, chainId, days, tx);
      if (found) await this.audit.retentionChanged(key.accountId, key.keyId, chainId, days, tx);
      return found;
    });
  }

  async setChainLegalHold(key: AuthenticatedKey, chainId: string, dto: LegalHoldDto): Promise<{ data: ChainView }> {
    const change = holdOf(dto);
    return this.changeChain(key, chainId, async (tx) => {
      const found = await this.chains.setLegalHold(key.accountId, chainId, change.hold, change.reason, tx);
      if (found) await this.audit.legalHoldChanged(key.accountId, key.keyId, chainId, change, tx);
      return found;
    });
  }

  async setAccountRetention(
    key: AuthenticatedKey,
    accountId: string,
    { days }: RetentionDto,
  ): Promise<{ data: AccountSettingsView }> {
    const account = this.accountOf(key, accountId);
    const updated = await this.transactions.run(async (tx) => {
      const row = await this.accounts.setRetention(account, days, tx);
      if (row) await this.audit.retentionChanged(account, key.keyId, account, days, tx);
      return row;
    });
    return { data: toAccountSettingsView(updated ?? notFound(`Account ${accountId}`)) };
  }

  async setAccountLegalHold(
    key: AuthenticatedKey,
    accountId: string,
    dto: LegalHoldDto,
  ): Promise<{ data: AccountSettingsView }> {
    const account = this.accountOf(key, accountId);
    const change = holdOf(dto);
    const updated = await this.transactions.run(async (tx) => {
      const row = await this.accounts.setLegalHold(account, change.hold, change.reason, tx);
      if (row) await this.audit.legalHoldChanged(account, key.keyId, account, change, tx);
      return row;
    });
    return { data: toAccountSettingsView(updated ?? notFound(`Account ${accountId}`)) };
  }

  private async changeChain(
    key: AuthenticatedKey,
    chainId: string,
    change: (tx: Parameters<Parameters<TransactionRunner['run']>[0]>[0]) => Promise<boolean>,
  ): Promise<{ data: ChainView }> {
    if (!CHAIN_ID.test(chainId)) notFound(`Chain ${chainId}`);
    const chain = await this.transactions.run(async (tx) =>
      (await change(tx)) ? this.chains.findOwned(key.accountId, chainId, tx) : null,
    );
    return { data: toChainView(chain ?? notFound(`Chain ${chainId}`)) };
  }

  /** The account a key may change: its own (until the operator scope lands); anything else is a 404. */
  private accountOf(key: AuthenticatedKey, accountId: string): string {
    if (!ACCOUNT_ID.test(accountId) || accountId !== key.accountId) notFound(`Account ${accountId}`);
    return accountId;
  }
}

function holdOf(dto: LegalHoldDto): { hold: boolean; reason: string | null } {
  return { hold: dto.hold, reason: dto.reason ?? null };
}

function notFound(what: string): never {
  throw AppError.notFound(what);
}

export function toAccountSettingsView(account: AccountSettingsRecord): AccountSettingsView {
  return {
    id: account.id,
    name: account.name,
    createdAt: account.createdAt.toISOString(),
    retentionDays: account.retentionDays,
    legalHold: account.legalHold,
  };
}
