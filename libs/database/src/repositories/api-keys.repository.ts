import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { KeyOrigin, Scope } from '@app/common/config/app-config';
import { Db } from '../transaction-runner';

/** An active key (neither revoked nor expired), as authentication needs it. */
export interface ActiveApiKeyRow {
  id: string;
  accountId: string;
  keyDigest: string;
  scopes: Scope[];
  expiresAt: Date | null;
}

/** A key as listings show it (never the key itself nor its digest: only its prefix). */
export interface ApiKeyRow {
  id: string;
  accountId: string;
  /** The account's name. */
  account: string;
  name: string;
  prefix: string;
  scopes: Scope[];
  origin: KeyOrigin;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

/** A key to store: only its digest and prefix, never the key. */
export interface NewApiKey {
  id: string;
  accountId: string;
  name: string;
  prefix: string;
  keyDigest: string;
  scopes: readonly Scope[];
  origin: KeyOrigin;
  expiresAt: Date | null;
}

const LISTING = `SELECT k.id, k.account_id AS "accountId", a.name AS account, k.name, k.prefix, k.scopes, k.origin,
                        k.created_at AS "createdAt", k.expires_at AS "expiresAt", k.revoked_at AS "revokedAt",
                        k.last_used_at AS "lastUsedAt"
                   FROM api_keys k JOIN accounts a ON a.id = k.account_id`;

/** Neither revoked nor expired, for the key aliased `k`. */
const ACTIVE = `k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > now())`;

/** Every query of the `api_keys` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class ApiKeysRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** The active key with this SHA-256 digest, or null. */
  async findActiveByDigest(keyDigest: string, db: Db = this.pool): Promise<ActiveApiKeyRow | null> {
    const [row] = (await db.query(
      `SELECT k.id, k.account_id AS "accountId", k.key_digest AS "keyDigest", k.scopes, k.expires_at AS "expiresAt"
         FROM api_keys k WHERE k.key_digest = $1 AND ${ACTIVE}`,
      [keyDigest],
    )) as ActiveApiKeyRow[];
    return row ?? null;
  }

  /**
   * The key `id` if it is active, its row locked until the transaction ends: a key change re-checks
   * its caller here, not in a cache (docs/contract.md §12). A concurrent revocation is waited for, and the
   * row is then judged as it committed (READ COMMITTED re-reads a row it waited for).
   */
  async lockActive(id: string, db: Db): Promise<ActiveApiKeyRow | null> {
    const [row] = (await db.query(
      `SELECT k.id, k.account_id AS "accountId", k.key_digest AS "keyDigest", k.scopes, k.expires_at AS "expiresAt"
         FROM api_keys k WHERE k.id = $1 AND ${ACTIVE} FOR NO KEY UPDATE`,
      [id],
    )) as ActiveApiKeyRow[];
    return row ?? null;
  }

  /** The digests of every active key, newest first, at most `limit`. */
  async activeDigests(limit: number, db: Db = this.pool): Promise<string[]> {
    const rows = (await db.query(
      `SELECT k.key_digest AS digest FROM api_keys k WHERE ${ACTIVE} ORDER BY k.created_at DESC LIMIT $1`,
      [limit],
    )) as { digest: string }[];
    return rows.map((r) => r.digest);
  }

  /** Stores a new key. */
  async insert(key: NewApiKey, db: Db = this.pool): Promise<void> {
    await db.query(
      `INSERT INTO api_keys (id, account_id, name, prefix, key_digest, scopes, origin, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [key.id, key.accountId, key.name, key.prefix, key.keyDigest, key.scopes, key.origin, key.expiresAt],
    );
  }

  /**
   * An API_KEYS entry: registers the key under `key.id` unless its digest is known; a known key of
   * the same account becomes a `config` key with exactly these scopes (revoked stays revoked).
   * Either way returns the id and account of the key with that digest. Race-safe.
   */
  async upsertConfigured(key: NewApiKey, db: Db = this.pool): Promise<{ id: string; accountId: string }> {
    await db.query(
      `INSERT INTO api_keys (id, account_id, name, prefix, key_digest, scopes, origin, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, 'config', NULL)
       ON CONFLICT (key_digest) DO UPDATE SET scopes = EXCLUDED.scopes, origin = 'config'
        WHERE api_keys.account_id = EXCLUDED.account_id`,
      [key.id, key.accountId, key.name, key.prefix, key.keyDigest, key.scopes],
    );
    const [row] = (await db.query(`SELECT id, account_id AS "accountId" FROM api_keys WHERE key_digest = $1`, [
      key.keyDigest,
    ])) as { id: string; accountId: string }[];
    if (!row) throw new Error('a key vanished while it was being registered');
    return row;
  }

  /** Revokes every active `config` key whose digest is not among `kept`; returns their ids. */
  async revokeConfiguredExcept(kept: readonly string[], db: Db = this.pool): Promise<string[]> {
    const rows = (await db.query(
      `UPDATE api_keys SET revoked_at = now()
        WHERE origin = 'config' AND revoked_at IS NULL AND NOT (key_digest = ANY($1::text[])) RETURNING id`,
      [kept],
    )) as [{ id: string }[], number];
    return rows[0].map((r) => r.id);
  }

  /** The account's keys, oldest first, after the cursor's key: an index range scan on ix_api_keys_account. */
  async listByAccount(
    accountId: string,
    limit: number,
    cursor?: { time: string; id: string },
    db: Db = this.pool,
  ): Promise<ApiKeyRow[]> {
    return (await db.query(
      `${LISTING} WHERE k.account_id = $1
          AND ($2::timestamptz IS NULL OR (k.created_at, k.id) > ($2::timestamptz, $3::varchar))
        ORDER BY k.created_at, k.id LIMIT $4`,
      [accountId, cursor?.time ?? null, cursor?.id ?? null, limit],
    )) as ApiKeyRow[];
  }

  /** The key `id` of the account, revoked or not, or null. */
  async findInAccount(accountId: string, id: string, db: Db = this.pool): Promise<ApiKeyRow | null> {
    const [row] = (await db.query(`${LISTING} WHERE k.account_id = $1 AND k.id = $2`, [accountId, id])) as ApiKeyRow[];
    return row ?? null;
  }

  /** Unrevoked keys whose id or prefix is `target`, within the named account when one is given. */
  async findActiveByIdOrPrefix(target: string, account: string | null, db: Db = this.pool): Promise<ApiKeyRow[]> {
    return (await db.query(
      `${LISTING} WHERE (k.id = $1 OR k.prefix = $1) AND ($2::text IS NULL OR a.name = $2) AND k.revoked_at IS NULL
        ORDER BY k.created_at, k.id`,
      [target, account],
    )) as ApiKeyRow[];
  }

  /** Active keys of the account holding `scope`, other than `exceptId`. */
  async countActiveWithScope(accountId: string, scope: Scope, exceptId: string, db: Db = this.pool): Promise<number> {
    const [row] = (await db.query(
      `SELECT count(*)::int AS n FROM api_keys k WHERE k.account_id = $1 AND $2 = ANY(k.scopes) AND k.id <> $3 AND ${ACTIVE}`,
      [accountId, scope, exceptId],
    )) as { n: number }[];
    return row?.n ?? 0;
  }

  /** Active keys per account, for these accounts (missing: none). */
  async countActiveByAccount(accountIds: readonly string[], db: Db = this.pool): Promise<Map<string, number>> {
    const rows = (await db.query(
      `SELECT k.account_id AS "accountId", count(*)::int AS n FROM api_keys k
        WHERE k.account_id = ANY($1::varchar[]) AND ${ACTIVE} GROUP BY k.account_id`,
      [accountIds],
    )) as { accountId: string; n: number }[];
    return new Map(rows.map((r) => [r.accountId, r.n]));
  }

  /** Revokes the key if it is still active; true when this call revoked it. */
  async revoke(id: string, db: Db = this.pool): Promise<boolean> {
    const [, count] = (await db.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [
      id,
    ])) as [unknown, number];
    return count > 0;
  }

  /** Makes the key expire `seconds` from now (the database's now), unless it expires sooner already. */
  async expireWithin(id: string, seconds: number, db: Db = this.pool): Promise<void> {
    await db.query(
      `UPDATE api_keys SET expires_at = least(expires_at, now() + make_interval(secs => $2)) WHERE id = $1`,
      [id, seconds],
    );
  }

  /** Records that these keys were used now; a key written less than a minute ago is left alone. */
  async touch(ids: readonly string[], db: Db = this.pool): Promise<void> {
    await db.query(
      `UPDATE api_keys SET last_used_at = now()
        WHERE id = ANY($1::varchar[]) AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [ids],
    );
  }

  /** Whether the key may still be used (neither revoked nor expired), asked of the database itself: for long-lived streams. */
  async isActive(id: string, db: Db = this.pool): Promise<boolean> {
    const rows = (await db.query(`SELECT 1 FROM api_keys k WHERE k.id = $1 AND ${ACTIVE}`, [id])) as unknown[];
    return rows.length > 0;
  }
}
