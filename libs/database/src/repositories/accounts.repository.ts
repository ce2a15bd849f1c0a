import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Db } from '../transaction-runner';

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
}
