import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Scope } from '@app/common/config/app-config';
import { AccountEntity } from '../entities/account.entity';
import { ApiKeyEntity } from '../entities/api-key.entity';
import { asNumber, computed, joined, selectRows, Table } from '../schema/table';
import { Db } from '../transaction-runner';

const keys = new Table(ApiKeyEntity, 'k');
const accounts = new Table(AccountEntity, 'a');

/** An active key (neither revoked nor expired), as authentication needs it. */
const ACTIVE_KEY = keys.select('id', 'accountId', 'keyDigest', 'scopes', 'expiresAt');
export type ActiveApiKeyRow = ReturnType<typeof ACTIVE_KEY.decode>;

/** A key as listings show it (never the key itself nor its digest: only its prefix), with its account's name. */
const KEY = joined(
  keys.select('id', 'accountId'),
  accounts.selectAs({ account: 'name' }),
  keys.select('name', 'prefix', 'scopes', 'origin', 'createdAt', 'expiresAt', 'revokedAt', 'lastUsedAt'),
);
export type ApiKeyRow = ReturnType<typeof KEY.decode>;

/** A key to store: only its digest and prefix, never the key. */
export type NewApiKey = Pick<
  ApiKeyEntity,
  'id' | 'accountId' | 'name' | 'prefix' | 'keyDigest' | 'origin' | 'expiresAt'
> & { scopes: readonly Scope[] };

const LISTING = `SELECT ${KEY.sql} FROM api_keys k JOIN accounts a ON a.id = ${keys.column('accountId')}`;

/** Neither revoked nor expired, for the key aliased `k`. */
const ACTIVE = `${keys.column('revokedAt')} IS NULL AND (${keys.column('expiresAt')} IS NULL OR ${keys.column('expiresAt')} > now())`;

/** The column list of an INSERT. */
const INSERTED = (['id', 'accountId', 'name', 'prefix', 'keyDigest', 'scopes', 'origin', 'expiresAt'] as const)
  .map((p) => keys.bare(p))
  .join(', ');

const ID = keys.select('id');
const COUNT = computed({ n: ['count(*)::int', asNumber] });

/** Every query of the `api_keys` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class ApiKeysRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** The active key with this SHA-256 digest, or null. */
  async findActiveByDigest(keyDigest: string, db: Db = this.pool): Promise<ActiveApiKeyRow | null> {
    const [row] = await selectRows(
      db,
      ACTIVE_KEY,
      `SELECT ${ACTIVE_KEY.sql} FROM api_keys k WHERE ${keys.column('keyDigest')} = $1 AND ${ACTIVE}`,
      [keyDigest],
    );
    return row ?? null;
  }

  /**
   * The key `id` if it is active, its row locked until the transaction ends: a key change re-checks
   * its caller here, not in a cache (docs/contract.md §12). A concurrent revocation is waited for, and the
   * row is then judged as it committed (READ COMMITTED re-reads a row it waited for).
   */
  async lockActive(id: string, db: Db): Promise<ActiveApiKeyRow | null> {
    const [row] = await selectRows(
      db,
      ACTIVE_KEY,
      `SELECT ${ACTIVE_KEY.sql} FROM api_keys k WHERE k.id = $1 AND ${ACTIVE} FOR NO KEY UPDATE`,
      [id],
    );
    return row ?? null;
  }

  /** The digests of every active key, newest first, at most `limit`. */
  async activeDigests(limit: number, db: Db = this.pool): Promise<string[]> {
    const digests = keys.selectAs({ digest: 'keyDigest' });
    const rows = await selectRows(
      db,
      digests,
      `SELECT ${digests.sql} FROM api_keys k WHERE ${ACTIVE} ORDER BY ${keys.column('createdAt')} DESC LIMIT $1`,
      [limit],
    );
    return rows.map((r) => r.digest);
  }

  /** Stores a new key. */
  async insert(key: NewApiKey, db: Db = this.pool): Promise<void> {
    await db.query(`INSERT INTO api_keys (${INSERTED}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, [
      key.id,
      ulidToUuid(key.accountId),
      key.name,
      key.prefix,
      key.keyDigest,
      key.scopes,
      key.origin,
      key.expiresAt,
    ]);
  }

  /**
   * An API_KEYS entry: registers the key under `key.id` unless its digest is known; a known key of
   * the same account becomes a `config` key with exactly these scopes, and this name with `rename`
   * (the development keys: a key of `API_KEYS` keeps the name it has; revoked stays revoked).
   * Either way returns the id and account of the key with that digest. Race-safe.
   */
  async upsertConfigured(
    key: NewApiKey & { rename?: boolean },
    db: Db = this.pool,
  ): Promise<{ id: string; accountId: string }> {
    const [scopes, origin, name] = [keys.bare('scopes'), keys.bare('origin'), keys.bare('name')];
    await db.query(
      `INSERT INTO api_keys AS k (${INSERTED}) VALUES ($1, $2, $3, $4, $5, $6, 'config', NULL)
       ON CONFLICT (${keys.bare('keyDigest')}) DO UPDATE SET ${scopes} = EXCLUDED.${scopes}, ${origin} = 'config'${key.rename ? `, ${name} = EXCLUDED.${name}` : ''}
        WHERE ${keys.column('accountId')} = EXCLUDED.${keys.bare('accountId')}`,
      [key.id, ulidToUuid(key.accountId), key.name, key.prefix, key.keyDigest, key.scopes],
    );
    const owner = keys.select('id', 'accountId');
    const [row] = await selectRows(
      db,
      owner,
      `SELECT ${owner.sql} FROM api_keys k WHERE ${keys.column('keyDigest')} = $1`,
      [key.keyDigest],
    );
    if (!row) throw new Error('a key vanished while it was being registered');
    return row;
  }

  /** Revokes every active `config` key whose digest is not among `kept`; returns their ids. */
  async revokeConfiguredExcept(kept: readonly string[], db: Db = this.pool): Promise<string[]> {
    const rows = await selectRows(
      db,
      ID,
      `WITH k AS (
         UPDATE api_keys k SET ${keys.bare('revokedAt')} = now()
          WHERE ${keys.column('origin')} = 'config' AND ${keys.column('revokedAt')} IS NULL
            AND NOT (${keys.column('keyDigest')} = ANY($1::text[]))
         RETURNING k.id)
       SELECT ${ID.sql} FROM k`,
      [kept],
    );
    return rows.map((r) => r.id);
  }

  /** The account's keys, oldest first, after the cursor's key: an index range scan on ix_api_keys_account. */
  async listByAccount(
    accountId: string,
    limit: number,
    cursor?: { time: string; id: string },
    db: Db = this.pool,
  ): Promise<ApiKeyRow[]> {
    const created = keys.column('createdAt');
    return selectRows(
      db,
      KEY,
      `${LISTING} WHERE ${keys.column('accountId')} = $1
          AND ($2::timestamptz IS NULL OR (${created}, k.id) > ($2::timestamptz, $3::varchar))
        ORDER BY ${created}, k.id LIMIT $4`,
      [ulidToUuid(accountId), cursor?.time ?? null, cursor?.id ?? null, limit],
    );
  }

  /** The key `id` of the account, revoked or not, or null. */
  async findInAccount(accountId: string, id: string, db: Db = this.pool): Promise<ApiKeyRow | null> {
    const [row] = await selectRows(db, KEY, `${LISTING} WHERE ${keys.column('accountId')} = $1 AND k.id = $2`, [
      ulidToUuid(accountId),
      id,
    ]);
    return row ?? null;
  }

  /** Unrevoked keys whose id or prefix is `target`, within the named account when one is given. */
  async findActiveByIdOrPrefix(target: string, account: string | null, db: Db = this.pool): Promise<ApiKeyRow[]> {
    return selectRows(
      db,
      KEY,
      `${LISTING} WHERE (k.id = $1 OR ${keys.column('prefix')} = $1) AND ($2::text IS NULL OR ${accounts.column('name')} = $2)
          AND ${keys.column('revokedAt')} IS NULL
        ORDER BY ${keys.column('createdAt')}, k.id`,
      [target, account],
    );
  }

  /** Active keys of the account holding `scope`, other than `exceptId`. */
  async countActiveWithScope(accountId: string, scope: Scope, exceptId: string, db: Db = this.pool): Promise<number> {
    const [row] = await selectRows(
      db,
      COUNT,
      `SELECT ${COUNT.sql} FROM api_keys k
        WHERE ${keys.column('accountId')} = $1 AND $2 = ANY(${keys.column('scopes')}) AND k.id <> $3 AND ${ACTIVE}`,
      [ulidToUuid(accountId), scope, exceptId],
    );
    return row?.n ?? 0;
  }

  /** Active keys per account, for these accounts (missing: none). */
  async countActiveByAccount(accountIds: readonly string[], db: Db = this.pool): Promise<Map<string, number>> {
    const perAccount = joined(keys.select('accountId'), COUNT);
    const rows = await selectRows(
      db,
      perAccount,
      `SELECT ${perAccount.sql} FROM api_keys k
        WHERE ${keys.column('accountId')} = ANY($1::uuid[]) AND ${ACTIVE} GROUP BY ${keys.column('accountId')}`,
      [accountIds.map(ulidToUuid)],
    );
    return new Map(rows.map((r) => [r.accountId, r.n]));
  }

  /** Revokes the key if it is still active; true when this call revoked it. */
  async revoke(id: string, db: Db = this.pool): Promise<boolean> {
    const revokedAt = keys.bare('revokedAt');
    const rows = await selectRows(
      db,
      ID,
      `WITH k AS (UPDATE api_keys SET ${revokedAt} = now() WHERE id = $1 AND ${revokedAt} IS NULL RETURNING id)
       SELECT ${ID.sql} FROM k`,
      [id],
    );
    return rows.length > 0;
  }

  /** Makes the key expire `seconds` from now (the database's now), unless it expires sooner already. */
  async expireWithin(id: string, seconds: number, db: Db = this.pool): Promise<void> {
    const expiresAt = keys.bare('expiresAt');
    await db.query(
      `UPDATE api_keys SET ${expiresAt} = least(${expiresAt}, now() + make_interval(secs => $2)) WHERE id = $1`,
      [id, seconds],
    );
  }

  /** Records that these keys were used now; a key written less than a minute ago is left alone. */
  async touch(ids: readonly string[], db: Db = this.pool): Promise<void> {
    const lastUsedAt = keys.bare('lastUsedAt');
    await db.query(
      `UPDATE api_keys SET ${lastUsedAt} = now()
        WHERE id = ANY($1::varchar[]) AND (${lastUsedAt} IS NULL OR ${lastUsedAt} < now() - interval '1 minute')`,
      [ids],
    );
  }

  /** Whether the key may still be used (neither revoked nor expired), asked of the database itself: for long-lived streams. */
  async isActive(id: string, db: Db = this.pool): Promise<boolean> {
    const rows = await selectRows(db, ID, `SELECT ${ID.sql} FROM api_keys k WHERE k.id = $1 AND ${ACTIVE}`, [id]);
    return rows.length > 0;
  }
}
