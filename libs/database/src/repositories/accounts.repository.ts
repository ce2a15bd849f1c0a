import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Db } from '../transaction-runner';
import { LegalHoldBy } from './chains.repository';

export interface AccountRow {
  id: string;
  name: string;
  createdAt: Date;
  /** Retention and legal hold (contract §14). */
  retentionDays: number | null;
  legalHold: boolean;
  /** Who placed the hold (only an operator lifts an operator's); null when not held. */
  legalHoldBy: LegalHoldBy | null;
}

const COLUMNS = `a.id, a.name, a.created_at AS "createdAt", a.retention_days AS "retentionDays", a.legal_hold AS "legalHold",
  a.legal_hold_by AS "legalHoldBy"`;

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

  /** Creates the account; null when the name is taken. */
  async create(id: string, name: string, db: Db = this.pool): Promise<AccountRow | null> {
    const [row] = (await db.query(
      `INSERT INTO accounts AS a (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
      [id, name],
    )) as AccountRow[];
    return row ?? null;
  }

  async findByName(name: string, db: Db = this.pool): Promise<AccountRow | null> {
    const [row] = (await db.query(`SELECT ${COLUMNS} FROM accounts a WHERE a.name = $1`, [name])) as AccountRow[];
    return row ?? null;
  }

  async findById(id: string, db: Db = this.pool): Promise<AccountRow | null> {
    const [row] = (await db.query(`SELECT ${COLUMNS} FROM accounts a WHERE a.id = $1`, [id])) as AccountRow[];
    return row ?? null;
  }

  /**
   * Locks the account's row for the rest of the transaction: changes to one account's keys are
   * serialized, so "the last admin key" is decided on what is committed. FOR NO KEY UPDATE, not FOR
   * UPDATE: the foreign-key checks of the account's appends (KEY SHARE) do not wait for it. Null: no account.
   */
  async lockById(id: string, db: Db): Promise<AccountRow | null> {
    const [row] = (await db.query(`SELECT ${COLUMNS} FROM accounts a WHERE a.id = $1 FOR NO KEY UPDATE`, [
      id,
    ])) as AccountRow[];
    return row ?? null;
  }

  /** Oldest first by (createdAt, id), after the cursor's key: an index range scan on ix_accounts_created. */
  async list(limit: number, cursor?: { time: string; id: string }, db: Db = this.pool): Promise<AccountRow[]> {
    return (await db.query(
      `SELECT ${COLUMNS} FROM accounts a
        WHERE ($1::timestamptz IS NULL OR (a.created_at, a.id) > ($1::timestamptz, $2::varchar))
        ORDER BY a.created_at, a.id LIMIT $3`,
      [cursor?.time ?? null, cursor?.id ?? null, limit],
    )) as AccountRow[];
  }

  /** Sets the account's default retention (null: forever); false for an unknown account. */
  async setRetention(id: string, days: number | null, db: Db = this.pool): Promise<boolean> {
    const rows = (await db.query(
      `WITH u AS (UPDATE accounts SET retention_days = $2 WHERE id = $1 RETURNING id) SELECT id FROM u`,
      [id, days],
    )) as unknown[];
    return rows.length === 1;
  }

  /** Puts the account on legal hold (with its reason and who placed it) or lifts it (`by` null); false for an unknown account. */
  async setLegalHold(
    id: string,
    hold: { hold: boolean; reason: string | null; by: LegalHoldBy | null },
    db: Db = this.pool,
  ): Promise<boolean> {
    const rows = (await db.query(
      `WITH u AS (UPDATE accounts SET legal_hold = $2, legal_hold_reason = $3, legal_hold_by = $4 WHERE id = $1 RETURNING id)
       SELECT id FROM u`,
      [id, hold.hold, hold.reason, hold.by],
    )) as unknown[];
    return rows.length === 1;
  }
}
