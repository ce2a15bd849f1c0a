import { Injectable } from '@nestjs/common';
import { assertMayManage, AuthenticatedKey, lockActiveCaller, mayManage, seesEveryAccount } from '@app/auth';
import { AppConfig, AppError, CHAIN_ID } from '@app/common';
import {
  AccountsRepository,
  ApiKeysRepository,
  AUDIT_CHAIN,
  ChainRetentionRepository,
  ChainsRepository,
  ChainStatusRecord,
  Db,
  LegalHoldBy,
  TransactionRunner,
} from '@app/database';
import { AccountsService } from '../accounts/accounts.service';
import { AccountView } from '../accounts/dto/account.view';
import { toChainView } from '../chains/chain.mapper';
import { ChainView } from '../chains/dto/chain.view';
import { LegalHoldDto, RetentionDto } from './dto/retention-settings.dto';
import { RetentionAudit } from './retention-audit';

/** A legal hold change as stored: who places it (`by`, null when lifting). */
interface HoldChange {
  hold: boolean;
  reason: string | null;
  by: LegalHoldBy | null;
}

/**
 * Retention and legal hold settings (docs/contract.md §14): each change and its `_audit` entry (in the
 * account of the chain or account changed) in one transaction; the answer is the updated chain
 * status or Account. Who may (@RequireScopes(MANAGE): admin or operator): an operator any account's chains
 * and accounts, an admin its own account's (`mayManage`, `seesEveryAccount`); anything else is a
 * 404. A hold placed by an operator key is changed or lifted only by an operator key (403), decided
 * under the row's lock; an `_audit` chain takes no retention below AUDIT_MIN_RETENTION_DAYS (400).
 * Each change re-checks the calling key inside its transaction (lockActiveCaller, docs/contract.md §8):
 * a key revoked a moment ago on another instance changes nothing (401).
 */
@Injectable()
export class RetentionService {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly chains: ChainsRepository,
    private readonly chainSettings: ChainRetentionRepository,
    private readonly accounts: AccountsRepository,
    private readonly apiKeys: ApiKeysRepository,
    private readonly accountViews: AccountsService,
    private readonly audit: RetentionAudit,
    private readonly config: AppConfig,
  ) {}

  async setChainRetention(
    key: AuthenticatedKey,
    chainId: string,
    { days }: RetentionDto,
  ): Promise<{ data: ChainView }> {
    return this.changeChain(key, chainId, async (chain, tx) => {
      if (chain.name === AUDIT_CHAIN && days !== null && days < this.config.auditMinRetentionDays)
        throw AppError.validation([
          {
            field: 'days',
            message: `days of an ${AUDIT_CHAIN} chain must be at least ${this.config.auditMinRetentionDays} (AUDIT_MIN_RETENTION_DAYS), or null`,
          },
        ]);
      await this.chainSettings.setRetention(chain.accountId, chain.id, days, tx);
      await this.audit.retentionChanged(chain.accountId, key.keyId, chain.id, days, tx);
    });
  }

  async setChainLegalHold(key: AuthenticatedKey, chainId: string, dto: LegalHoldDto): Promise<{ data: ChainView }> {
    const change = holdOf(key, dto);
    return this.changeChain(key, chainId, async (chain, tx) => {
      mayChangeHold(key, chain.retention.legalHold ? chain.retention.legalHoldBy : null);
      await this.chainSettings.setLegalHold(chain.accountId, chain.id, change, tx);
      await this.audit.legalHoldChanged(chain.accountId, key.keyId, chain.id, auditedHold(change), tx);
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
    const change = holdOf(key, dto);
    return this.changeAccount(key, accountId, async (tx) => {
      const account = await this.accounts.lockById(accountId, tx);
      if (!account) return false;
      mayChangeHold(key, account.legalHold ? account.legalHoldBy : null);
      await this.accounts.setLegalHold(accountId, change, tx);
      await this.audit.legalHoldChanged(accountId, key.keyId, accountId, auditedHold(change), tx);
      return true;
    });
  }

  /** The chain locked for the change: any account's for an operator, else only the key's own account's. */
  private async changeChain(
    key: AuthenticatedKey,
    chainId: string,
    change: (chain: ChainStatusRecord, tx: Db) => Promise<void>,
  ): Promise<{ data: ChainView }> {
    if (!CHAIN_ID.test(chainId)) notFound(`Chain ${chainId}`);
    const scope = seesEveryAccount(key) ? null : key.accountId;
    const chain = await this.transactions.run(async (tx) => {
      const by = await lockActiveCaller(this.apiKeys, key, tx);
      const locked = await this.chainSettings.lockForSettings(scope, chainId, tx);
      if (!locked || !mayManage(by, locked.accountId)) return null;
      await change(locked, tx);
      return this.chains.findOwned(locked.accountId, chainId, tx);
    });
    return { data: toChainView(chain ?? notFound(`Chain ${chainId}`)) };
  }

  private async changeAccount(
    key: AuthenticatedKey,
    accountId: string,
    change: (tx: Db) => Promise<boolean>,
  ): Promise<{ data: AccountView }> {
    assertMayManage(key, accountId);
    const changed = await this.transactions.run(async (tx) => {
      const by = await lockActiveCaller(this.apiKeys, key, tx);
      return mayManage(by, accountId) && change(tx);
    });
    if (!changed) notFound(`Account ${accountId}`);
    return this.accountViews.get(key, accountId);
  }
}

/** The change a key asks for: a hold is placed by the key's kind (`operator` or `admin`). */
function holdOf(key: AuthenticatedKey, dto: LegalHoldDto): HoldChange {
  const by: LegalHoldBy = seesEveryAccount(key) ? 'operator' : 'admin';
  return { hold: dto.hold, reason: dto.reason ?? null, by: dto.hold ? by : null };
}

/** The `_audit` entry's context: the change asked for, as before `by` existed. */
function auditedHold({ hold, reason }: HoldChange): { hold: boolean; reason: string | null } {
  return { hold, reason };
}

/** docs/contract.md §14: a hold an operator placed is changed or lifted only by an operator key. */
function mayChangeHold(key: AuthenticatedKey, heldBy: LegalHoldBy | null): void {
  if (heldBy === 'operator' && !seesEveryAccount(key))
    throw new AppError(
      'FORBIDDEN',
      'This legal hold was placed by an operator key; only an operator key may change or lift it.',
      { legalHoldBy: heldBy },
    );
}

function notFound(what: string): never {
  throw AppError.notFound(what);
}
