import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Db } from '../transaction-runner';

/** An account's retention settings (contract §14). */
export interface AccountSettingsRecord {
  id: string;
  name: string;
  createdAt: Date;
  retentionDays: number | null;
  legalHold: boolean;
}

interface AccountSettingsRow {
  id: string;
  name: string;
  created_at: Date;
  retention_days: number | null;
  legal_hold: boolean;
}

const SETTINGS = 'id, name, created_at, retention_days, legal_hold';
const toSettings = (row: AccountSettingsRow): AccountSettingsRecord => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
  retentionDays: row.retention_days,
  legalHold: row.legal_hold,
});

/** Every query of the `accounts` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class AccountsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** The id of the account with this name, creating it (with `newId`) when there is none. Race-safe. */
  async ensureByName(name: string, newId: string, db: Db = this.pool): Promise<string> {
    await db.query(`INSERT INTO accounts (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [newId, name]);
    const [row] = (await db.query(`SELECT id FROM accounts WHERE name = $1`, [name])) as { id: string }[];
    if (!row) throw new Error(`account '${name}' vanished while it was being created`);
    return row.id;
  }

  /** Sets the account's default retention (null: forever); null for an unknown account. */
  async setRetention(id: string, days: number | null, db: Db = this.pool): Promise<AccountSettingsRecord | null> {
    const [row] = (await db.query(
      `WITH u AS (UPDATE accounts SET retention_days = $2 WHERE id = $1 RETURNING ${SETTINGS}) SELECT * FROM u`,
      [id, days],
    )) as AccountSettingsRow[];
    return row ? toSettings(row) : null;
  }

  /** Puts the account on legal hold (with its reason) or lifts it; null for an unknown account. */
  async setLegalHold(
    id: string,
    hold: boolean,
    reason: string | null,
    db: Db = this.pool,
  ): Promise<AccountSettingsRecord | null> {
    const [row] = (await db.query(
      `WITH u AS (UPDATE accounts SET legal_hold = $2, legal_hold_reason = $3 WHERE id = $1 RETURNING ${SETTINGS})
       SELECT * FROM u`,
      [id, hold, reason],
    )) as AccountSettingsRow[];
    return row ? toSettings(row) : null;
  }
}
