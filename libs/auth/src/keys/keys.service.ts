import { Inject, Injectable, Optional } from '@nestjs/common';
import { ulid } from 'ulid';
import { ACCOUNT_ID, AppError, KEY_ID, KEYS_CURSOR, KeyOrigin, Scope, scopesProblem } from '@app/common';
import { AccountRow, AccountsRepository, ApiKeyRow, ApiKeysRepository, Db, TransactionRunner } from '@app/database';
import { apiKeyPrefix, digestApiKey, generateApiKey } from '../api-key';
import { ApiKeyStore } from '../api-key.store';
import { Caller, grantableScopes, mayManage } from './access';
import { AuditEntry, AuditTrail, keyActor } from './audit-trail';

export interface NewKey {
  name: string;
  scopes: readonly Scope[];
  expiresAt: Date | null;
}

/** Items of a list, and the cursor of the next page when there is one. */
export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

/** A key just made: the only time its secret exists outside the caller's hands. */
export interface MadeKey {
  key: ApiKeyRow;
  secret: string;
}

/**
 * Every rule about keys, once (contract §12), for the HTTP API and the key CLI alike: who manages
 * which account's keys (access.ts), scope ceilings, `operator` for `system` only, expiry in the
 * future, the last admin key, rotation with overlap. Each change runs in one transaction that
 * locks the account's row (changes to one account's keys are serialized) and appends the change
 * to the account's `_audit` chain when a key made it. A revocation or new expiry is forgotten at
 * once by this instance's key cache, and by the others' within CACHE_TTL_MS.
 */
@Injectable()
export class KeysService {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly accounts: AccountsRepository,
    private readonly apiKeys: ApiKeysRepository,
    // Explicit tokens: a union type's design metadata is Object. The CLI passes neither.
    @Optional() @Inject(AuditTrail) private readonly audit: AuditTrail | null = null,
    @Optional() @Inject(ApiKeyStore) private readonly store: ApiKeyStore | null = null,
  ) {}

  /** A page of the account's keys, oldest first (`limit`, then the KEYS_CURSOR of the last page's last key). */
  async list(caller: Caller, accountId: string, limit: number, cursor?: string): Promise<Page<ApiKeyRow>> {
    const account = await this.accountFor(caller, accountId, this.transactions.pool, false);
    const after = cursor === undefined ? undefined : KEYS_CURSOR.decode(account.id, cursor);
    const rows = await this.apiKeys.listByAccount(account.id, limit + 1, after);
    return KEYS_CURSOR.page(account.id, rows, limit, (k) => ({ time: k.createdAt.toISOString(), id: k.id }));
  }

  async create(caller: Caller, accountId: string, input: NewKey): Promise<MadeKey> {
    if (input.expiresAt !== null && input.expiresAt.getTime() <= Date.now())
      throw AppError.validation([{ field: 'expiresAt', message: 'expiresAt must be in the future' }]);
    const made = await this.transactions.run(async (tx) => {
      const account = await this.accountFor(caller, accountId, tx, true);
      this.checkGrant(caller, account, input.scopes);
      const { id, secret } = await this.insert(caller, account.id, input, tx);
      await this.record(caller, account.id, 'key.created', id, keyFacts(input), tx);
      return { key: await this.found(account.id, id, tx), secret };
    });
    this.store?.remember([digestApiKey(made.secret)]);
    return made;
  }

  /** Revokes the key (again: unchanged); a key cannot revoke itself when it is the account's last with `admin`. */
  async revoke(caller: Caller, accountId: string, keyId: string): Promise<ApiKeyRow> {
    const { key, changed } = await this.transactions.run(async (tx) => {
      const account = await this.accountFor(caller, accountId, tx, true);
      const key = await this.keyOf(account, keyId, tx);
      if (key.revokedAt) return { key, changed: false };
      if (
        caller !== 'cli' &&
        caller.keyId === key.id &&
        key.scopes.includes('admin') &&
        (await this.apiKeys.countActiveWithScope(account.id, 'admin', key.id, tx)) === 0
      )
        throw new AppError('CONFLICT', 'This key is the account’s last admin key: it cannot revoke itself.', {
          keyId: key.id,
        });
      await this.apiKeys.revoke(key.id, tx);
      await this.record(caller, account.id, 'key.revoked', key.id, { name: key.name }, tx);
      return { key: await this.found(account.id, key.id, tx), changed: true };
    });
    if (changed) this.store?.forget([key.id]);
    return key;
  }

  /** A new key with the old one's name and scopes; the old one expires `overlapSeconds` from now. */
  async rotate(caller: Caller, accountId: string, keyId: string, overlapSeconds: number): Promise<MadeKey> {
    const made = await this.transactions.run(async (tx) => {
      const account = await this.accountFor(caller, accountId, tx, true);
      const old = await this.keyOf(account, keyId, tx);
      if (old.revokedAt || (old.expiresAt && old.expiresAt.getTime() <= Date.now()))
        throw new AppError('CONFLICT', 'A revoked or expired key cannot be rotated.', { keyId: old.id });
      this.checkGrant(caller, account, old.scopes);
      const { id, secret } = await this.insert(caller, account.id, { ...old, expiresAt: null }, tx);
      await this.apiKeys.expireWithin(old.id, overlapSeconds, tx);
      const oldKey = await this.found(account.id, old.id, tx);
      await this.record(
        caller,
        account.id,
        'key.rotated',
        old.id,
        { newKeyId: id, overlapSeconds, expiresAt: oldKey.expiresAt?.toISOString() ?? null },
        tx,
      );
      return { key: await this.found(account.id, id, tx), secret };
    });
    this.store?.forget([keyId]);
    this.store?.remember([digestApiKey(made.secret)]);
    return made;
  }

  /** The account's id by name, creating it when there is none (the CLI's `keys create --account`). */
  async ensureAccount(name: string): Promise<string> {
    return this.transactions.run((tx) => this.accounts.ensureByName(name, `acc_${ulid()}`, tx));
  }

  /** 404 for an account the caller may not manage, exactly as for one that does not exist (contract §6). */
  private async accountFor(caller: Caller, accountId: string, db: Db, lock: boolean): Promise<AccountRow> {
    const account =
      ACCOUNT_ID.test(accountId) && mayManage(caller, accountId)
        ? await (lock ? this.accounts.lockById(accountId, db) : this.accounts.findById(accountId, db))
        : null;
    if (!account) throw AppError.notFound(`Account ${accountId}`);
    return account;
  }

  private async keyOf(account: AccountRow, keyId: string, tx: Db): Promise<ApiKeyRow> {
    const key = KEY_ID.test(keyId) ? await this.apiKeys.findInAccount(account.id, keyId, tx) : null;
    if (!key) throw AppError.notFound(`Key ${keyId}`);
    return key;
  }

  private async found(accountId: string, keyId: string, tx: Db): Promise<ApiKeyRow> {
    const key = await this.apiKeys.findInAccount(accountId, keyId, tx);
    if (!key) throw new Error(`key ${keyId} vanished inside its transaction`);
    return key;
  }

  private checkGrant(caller: Caller, account: AccountRow, scopes: readonly Scope[]): void {
    const allowed = grantableScopes(caller);
    const beyond = scopes.filter((s) => !allowed.includes(s));
    if (beyond.length > 0)
      throw new AppError('FORBIDDEN', `This key cannot give the scope(s) ${beyond.join(', ')}.`, {
        scopes: beyond,
      });
    const problem = scopesProblem(account.name, scopes);
    if (problem) throw new AppError('FORBIDDEN', `Not allowed: ${problem}.`, {});
  }

  private async insert(
    caller: Caller,
    accountId: string,
    input: NewKey,
    tx: Db,
  ): Promise<{ id: string; secret: string }> {
    const secret = generateApiKey();
    const id = `key_${ulid()}`;
    const origin: KeyOrigin = caller === 'cli' ? 'cli' : 'api';
    await this.apiKeys.insert(
      {
        id,
        accountId,
        name: input.name,
        prefix: apiKeyPrefix(secret),
        keyDigest: digestApiKey(secret),
        scopes: [...new Set(input.scopes)],
        origin,
        expiresAt: input.expiresAt,
      },
      tx,
    );
    return { id, secret };
  }

  /** Appends the change to the account's `_audit` chain in its transaction, when a key made it. */
  private async record(
    caller: Caller,
    accountId: string,
    action: AuditEntry['action'],
    resource: string,
    context: Record<string, unknown>,
    tx: Db,
  ): Promise<void> {
    if (caller === 'cli') return;
    if (!this.audit) throw new Error('KeysService needs an AuditTrail to serve keys');
    await this.audit.record(accountId, [{ actor: keyActor(caller.keyId), action, resource, context }], tx);
  }
}

/** What `_audit` says of a new key: never its secret, digest or prefix. */
function keyFacts(input: NewKey): Record<string, unknown> {
  return { name: input.name, scopes: [...new Set(input.scopes)], expiresAt: input.expiresAt?.toISOString() ?? null };
}
