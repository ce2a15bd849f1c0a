import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AccountEntity } from '../entities/account.entity';
import { selectRows, Table } from '../schema/table';
import { Db } from '../transaction-runner';
import { lockLegalHolds } from './legal-hold-lock';

const accounts = new Table(AccountEntity, 'a');

/** What the service reads of an account: retention and legal hold (docs/contract.md §14), who placed the hold. */
const ACCOUNT = accounts.select('id', 'name', 'createdAt', 'retentionDays', 'legalHold', 'legalHoldBy');
export type AccountRow = ReturnType<typeof ACCOUNT.decode>;

const COLUMNS = ACCOUNT.sql;

/** Every query of the `accounts` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class AccountsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** The id of the account with this name, creating it (with `newId`) when there is none. Race-safe. */
  async ensureByName(name: string, newId: string, db: Db = this.pool): Promise<string> {
    await db.query(`INSERT INTO accounts (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [
      ulidToUuid(newId),
      name,
    ]);
    const [row] = await selectRows(db, accounts.select('id'), `SELECT a.id AS "id" FROM accounts a WHERE a.name = $1`, [
      name,
    ]);
    if (!row) throw new Error(`account '${name}' vanished while it was being created`);
    return row.id;
  }

  /** Creates the account; null when the name is taken. */
  async create(id: string, name: string, db: Db = this.pool): Promise<AccountRow | null> {
    const [row] = await selectRows(
      db,
      ACCOUNT,
      `INSERT INTO accounts AS a (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING RETURNING ${COLUMNS}`,
      [ulidToUuid(id), name],
    );
    return row ?? null;
  }

  async findByName(name: string, db: Db = this.pool): Promise<AccountRow | null> {
    const [row] = await selectRows(db, ACCOUNT, `SELECT ${COLUMNS} FROM accounts a WHERE a.name = $1`, [name]);
    return row ?? null;
  }

  async findById(id: string, db: Db = this.pool): Promise<AccountRow | null> {
    const [row] = await selectRows(db, ACCOUNT, `SELECT ${COLUMNS} FROM accounts a WHERE a.id = $1`, [ulidToUuid(id)]);
    return row ?? null;
  }

  /**
   * Locks the account's row for the rest of the transaction: changes to one account's keys are
   * serialized, so "the last admin key" is decided on what is committed. FOR NO KEY UPDATE, not FOR
   * UPDATE: the foreign-key checks of the account's appends (KEY SHARE) do not wait for it. Null: no account.
   */
  async lockById(id: string, db: Db): Promise<AccountRow | null> {
    const [row] = await selectRows(db, ACCOUNT, `SELECT ${COLUMNS} FROM accounts a WHERE a.id = $1 FOR NO KEY UPDATE`, [
      ulidToUuid(id),
    ]);
    return row ?? null;
  }

  /** Oldest first by (createdAt, id), after the cursor's key: an index range scan on ix_accounts_created. */
  async list(limit: number, cursor?: { time: string; id: string }, db: Db = this.pool): Promise<AccountRow[]> {
    const created = accounts.column('createdAt');
    return selectRows(
      db,
      ACCOUNT,
      `SELECT ${COLUMNS} FROM accounts a
        WHERE ($1::timestamptz IS NULL OR (${created}, a.id) > ($1::timestamptz, $2::uuid))
        ORDER BY ${created}, a.id LIMIT $3`,
      [cursor?.time ?? null, cursor ? ulidToUuid(cursor.id) : null, limit],
    );
  }

  /** Sets the account's default retention (null: forever); false for an unknown account. */
  async setRetention(id: string, days: number | null, db: Db = this.pool): Promise<boolean> {
    const rows = await selectRows(
      db,
      accounts.select('id'),
      `WITH a AS (UPDATE accounts SET ${accounts.bare('retentionDays')} = $2 WHERE id = $1 RETURNING id) SELECT a.id AS "id" FROM a`,
      [ulidToUuid(id), days],
    );
    return rows.length === 1;
  }

  /** Puts the account on legal hold (with its reason and who placed it) or lifts it (`by` null); false for an unknown account. */
  async setLegalHold(
    id: string,
    hold: { hold: boolean; reason: string | null; by: AccountEntity['legalHoldBy'] },
    db: Db = this.pool,
  ): Promise<boolean> {
    await lockLegalHolds(id, db);
    const set = (['legalHold', 'legalHoldReason', 'legalHoldBy'] as const).map(
      (p, i) => `${accounts.bare(p)} = $${i + 2}`,
    );
    const rows = await selectRows(
      db,
      accounts.select('id'),
      `WITH a AS (UPDATE accounts SET ${set.join(', ')} WHERE id = $1 RETURNING id) SELECT a.id AS "id" FROM a`,
      [ulidToUuid(id), hold.hold, hold.reason, hold.by],
    );
    return rows.length === 1;
  }
}
