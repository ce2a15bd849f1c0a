import { Inject, Injectable, Optional } from '@nestjs/common';
import { ulid } from 'ulid';
import { AppError, KEY_ID, KEYS_CURSOR, KeyOrigin, Scope } from '@app/common';
import {
  AccountRow,
  AccountsRepository,
  ApiKeyRow,
  ApiKeysRepository,
  AuditEntry,
  AuditTrail,
  Db,
  keyActor,
  TransactionRunner,
} from '@app/database';
import { apiKeyPrefix, digestApiKey, generateApiKey } from '../api-key';
import { ApiKeyStore } from '../api-key.store';
import { assertMayChange, assertMayGive, assertMayManage, Caller, manageableAccount } from './access';
import { lockActiveCaller } from './active-caller';

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
 * Every rule about keys, once (docs/contract.md §12), for the HTTP API and the key CLI alike: who manages
 * which account's keys (access.ts), scope ceilings, `operator` for `system` only, expiry in the
 * future, the last admin and operator keys, revoking needs the key's every scope, rotation with
 * overlap. Each change runs in one transaction that locks the account's row, then re-checks the
 * calling key (lockFor), and appends the change to the account's `_audit` chain when a key made it. A revocation or new expiry is forgotten at
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
      const { account, by } = await this.lockFor(caller, accountId, tx);
      assertMayGive(by, account.name, input.scopes);
      const { id, secret } = await this.insert(by, account.id, input, tx);
      await this.record(by, account.id, 'key.created', id, keyFacts(input), tx);
      return { key: await this.found(account.id, id, tx), secret };
    });
    this.store?.remember([digestApiKey(made.secret)]);
    return made;
  }

  /** Revokes the key (again: unchanged), when the caller holds its every scope and it is not a last key (lastKeyProblem). */
  async revoke(caller: Caller, accountId: string, keyId: string): Promise<ApiKeyRow> {
    const { key, changed } = await this.transactions.run(async (tx) => {
      const { account, by } = await this.lockFor(caller, accountId, tx);
      const key = await this.keyOf(account, keyId, tx);
      assertMayChange(by, key);
      if (key.revokedAt) return { key, changed: false };
      const problem = await this.lastKeyProblem(by, key, tx);
      if (problem) throw new AppError('CONFLICT', problem, { keyId: key.id });
      await this.apiKeys.revoke(key.id, tx);
      await this.record(by, account.id, 'key.revoked', key.id, { name: key.name }, tx);
      return { key: await this.found(account.id, key.id, tx), changed: true };
    });
    if (changed) this.store?.forget([key.id]);
    return key;
  }

  /** A new key with the old one's name and scopes; the old one expires `overlapSeconds` from now. */
  async rotate(caller: Caller, accountId: string, keyId: string, overlapSeconds: number): Promise<MadeKey> {
    const made = await this.transactions.run(async (tx) => {
      const { account, by } = await this.lockFor(caller, accountId, tx);
      const old = await this.keyOf(account, keyId, tx);
      assertMayChange(by, old);
      if (old.revokedAt || (old.expiresAt && old.expiresAt.getTime() <= Date.now()))
        throw new AppError('CONFLICT', 'A revoked or expired key cannot be rotated.', { keyId: old.id });
      assertMayGive(by, account.name, old.scopes);
      const { id, secret } = await this.insert(by, account.id, { ...old, expiresAt: null }, tx);
      await this.apiKeys.expireWithin(old.id, overlapSeconds, tx);
      const oldKey = await this.found(account.id, old.id, tx);
      await this.record(
        by,
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

  /**
   * Locks the account's row, then the calling key's (the one order every key change takes; a
   * deadlock with another statement is retried by TransactionRunner): changes to one account's keys
   * are serialized, and each judges the caller, the last admin and the last operator on what is
   * committed, never on a cache (docs/contract.md §12).
   */
  private async lockFor(caller: Caller, accountId: string, tx: Db): Promise<{ account: AccountRow; by: Caller }> {
    const account = await this.accountFor(caller, accountId, tx, true);
    if (caller === 'cli') return { account, by: caller };
    const by = await lockActiveCaller(this.apiKeys, caller, tx);
    assertMayManage(by, account.id);
    return { account, by };
  }

  /**
   * Why revoking `key` would leave an account unmanageable over HTTP, or null: a key revoking
   * itself as its account's last `admin` key; anyone revoking `system`'s last `operator` key. The
   * CLI, which recovers from either, may.
   */
  private async lastKeyProblem(by: Caller, key: ApiKeyRow, tx: Db): Promise<string | null> {
    if (by === 'cli') return null;
    const lastWith = async (scope: Scope) =>
      key.scopes.includes(scope) && (await this.apiKeys.countActiveWithScope(key.accountId, scope, key.id, tx)) === 0;
    if (by.keyId === key.id && (await lastWith('admin')))
      return 'This key is the account’s last admin key: it cannot revoke itself.';
    if (await lastWith('operator')) return 'This is the last operator key of system: it cannot be revoked.';
    return null;
  }

  /** 404 for an account the caller may not manage, exactly as for one that does not exist (docs/contract.md §6). */
  private accountFor(caller: Caller, accountId: string, db: Db, lock: boolean): Promise<AccountRow> {
    return manageableAccount(caller, accountId, (id) =>
      lock ? this.accounts.lockById(id, db) : this.accounts.findById(id, db),
    );
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
