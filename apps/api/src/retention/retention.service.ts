import { Injectable } from '@nestjs/common';
import { AuthenticatedKey, mayManage } from '@app/auth';
import { ACCOUNT_ID, AppError, CHAIN_ID } from '@app/common';
import { AccountsRepository, ChainsRepository, Db, TransactionRunner } from '@app/database';
import { AccountsService } from '../accounts/accounts.service';
import { AccountView } from '../accounts/dto/account.view';
import { toChainView } from '../chains/chain.mapper';
import { ChainView } from '../chains/dto/chain.view';
import { LegalHoldDto, RetentionDto } from './dto/retention-settings.dto';
import { RetentionAudit } from './retention-audit';

/**
 * Retention and legal hold settings (contract §14): each change and its `_audit` entry in one
 * transaction; the answer is the updated chain status or Account. Who may (ROUTE_SCOPES: admin or
 * operator): a chain is the key's account's (tenancy, as everywhere); an account is one the key may
 * manage (`mayManage`: an operator any, an admin its own); anything else is a 404.
 */
@Injectable()
export class RetentionService {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly chains: ChainsRepository,
    private readonly accounts: AccountsRepository,
    private readonly accountViews: AccountsService,
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
  ): Promise<{ data: AccountView }> {
    return this.changeAccount(key, accountId, async (tx) => {
      const found = await this.accounts.setRetention(accountId, days, tx);
      if (found) await this.audit.retentionChanged(accountId, key.keyId, accountId, days, tx);
      return found;
    });
  }

  async setAccountLegalHold(
    key: AuthenticatedKey,
    accountId: string,
    dto: LegalHoldDto,
  ): Promise<{ data: AccountView }> {
    const change = holdOf(dto);
    return this.changeAccount(key, accountId, async (tx) => {
      const found = await this.accounts.setLegalHold(accountId, change.hold, change.reason, tx);
      if (found) await this.audit.legalHoldChanged(accountId, key.keyId, accountId, change, tx);
      return found;
    });
  }

  private async changeChain(
    key: AuthenticatedKey,
    chainId: string,
    change: (tx: Db) => Promise<boolean>,
  ): Promise<{ data: ChainView }> {
    if (!CHAIN_ID.test(chainId)) notFound(`Chain ${chainId}`);
    const chain = await this.transactions.run(async (tx) =>
      (await change(tx)) ? this.chains.findOwned(key.accountId, chainId, tx) : null,
    );
    return { data: toChainView(chain ?? notFound(`Chain ${chainId}`)) };
  }

  private async changeAccount(
    key: AuthenticatedKey,
    accountId: string,
    change: (tx: Db) => Promise<boolean>,
  ): Promise<{ data: AccountView }> {
    if (!ACCOUNT_ID.test(accountId) || !mayManage(key, accountId)) notFound(`Account ${accountId}`);
    if (!(await this.transactions.run(change))) notFound(`Account ${accountId}`);
    return this.accountViews.get(key, accountId);
  }
}

function holdOf(dto: LegalHoldDto): { hold: boolean; reason: string | null } {
  return { hold: dto.hold, reason: dto.reason ?? null };
}

function notFound(what: string): never {
  throw AppError.notFound(what);
}
