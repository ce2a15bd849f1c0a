import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { Scope } from '@app/common/config/app-config';
import { Db } from '../transaction-runner';

/** An active key, as authentication needs it. */
export interface ActiveApiKeyRow {
  id: string;
  accountId: string;
  keyDigest: string;
  scopes: Scope[];
}

/** A key as `cli keys list|revoke` shows it (never the key itself: only its prefix). */
export interface ApiKeyListingRow {
  id: string;
  prefix: string;
  scopes: Scope[];
  createdAt: Date;
  revokedAt: Date | null;
  account: string;
}

const LISTING = `SELECT k.id, k.prefix, k.scopes, k.created_at AS "createdAt", k.revoked_at AS "revokedAt", a.name AS account
                   FROM api_keys k JOIN accounts a ON a.id = k.account_id`;

/** Every query of the `api_keys` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class ApiKeysRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** The unrevoked key with this SHA-256 digest, or null. */
  async findActiveByDigest(keyDigest: string, db: Db = this.pool): Promise<ActiveApiKeyRow | null> {
    const [row] = (await db.query(
      `SELECT id, account_id AS "accountId", key_digest AS "keyDigest", scopes
         FROM api_keys WHERE key_digest = $1 AND revoked_at IS NULL`,
      [keyDigest],
    )) as ActiveApiKeyRow[];
    return row ?? null;
  }

  /**
   * Registers a key under `newId` unless its digest is already registered; either way returns the
   * id and account of the key with that digest. Race-safe (ON CONFLICT on the digest).
   */
  async ensure(
    key: { newId: string; accountId: string; prefix: string; keyDigest: string; scopes: readonly Scope[] },
    db: Db = this.pool,
  ): Promise<{ id: string; accountId: string }> {
    await db.query(
      `INSERT INTO api_keys (id, account_id, prefix, key_digest, scopes) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (key_digest) DO NOTHING`,
      [key.newId, key.accountId, key.prefix, key.keyDigest, key.scopes],
    );
    const [row] = (await db.query(`SELECT id, account_id AS "accountId" FROM api_keys WHERE key_digest = $1`, [
      key.keyDigest,
    ])) as { id: string; accountId: string }[];
    if (!row) throw new Error('a key vanished while it was being registered');
    return row;
  }

  /** Every key of the account with this name, oldest first. */
  async listByAccountName(account: string, db: Db = this.pool): Promise<ApiKeyListingRow[]> {
    return (await db.query(`${LISTING} WHERE a.name = $1 ORDER BY k.created_at, k.id`, [
      account,
    ])) as ApiKeyListingRow[];
  }

  /** Unrevoked keys whose id or prefix is `target`, within the named account when one is given. */
  async findActiveByIdOrPrefix(
    target: string,
    account: string | null,
    db: Db = this.pool,
  ): Promise<ApiKeyListingRow[]> {
    return (await db.query(
      `${LISTING} WHERE (k.id = $1 OR k.prefix = $1) AND ($2::text IS NULL OR a.name = $2) AND k.revoked_at IS NULL
        ORDER BY k.created_at, k.id`,
      [target, account],
    )) as ApiKeyListingRow[];
  }

  /** Revokes the key if it is still active. */
  async revoke(id: string, db: Db = this.pool): Promise<void> {
    await db.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL`, [id]);
  }

  /** Whether the key may still be used (not revoked), asked of the database itself: for long-lived streams. */
  async isActive(id: string, db: Db = this.pool): Promise<boolean> {
    const rows = (await db.query(`SELECT 1 FROM api_keys WHERE id = $1 AND revoked_at IS NULL`, [id])) as unknown[];
    return rows.length > 0;
  }
}
