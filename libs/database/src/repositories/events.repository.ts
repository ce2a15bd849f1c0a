import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Db } from '../transaction-runner';
import {
  ISO_TIMESTAMP,
  VerificationWindow,
  VerificationWindowEventRow,
  verificationWindowEventsQuery,
  VerifiedEventRow,
} from './verification-window.queries';

/** Every query of the `events` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class EventsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** One event of the account, as verification reads it; null for an unknown id or another account's. */
  async findForVerification(accountId: string, id: string, db: Db = this.pool): Promise<VerifiedEventRow | null> {
    const [row] = (await db.query(
      `SELECT id, chain_id AS "chainId", position::float8 AS position, actor, action, resource, context,
              ${ISO_TIMESTAMP} AS "timestamp", previous_hash AS "previousHash", hash
         FROM events WHERE id = $1 AND account_id = $2`,
      [id, accountId],
    )) as VerifiedEventRow[];
    return row ?? null;
  }

  /** The hash and timestamp of the account's event at `position` of the chain; null when there is none. */
  async findLinkFacts(
    accountId: string,
    chainId: string,
    position: number,
    db: Db = this.pool,
  ): Promise<{ hash: string; timestamp: string } | null> {
    const [row] = (await db.query(
      `SELECT hash, ${ISO_TIMESTAMP} AS "timestamp" FROM events WHERE account_id = $1 AND chain_id = $2 AND position = $3`,
      [accountId, chainId, position],
    )) as { hash: string; timestamp: string }[];
    return row ?? null;
  }

  /** The stored hash of the event at `position` of the chain, or null when there is none. */
  async findHashAt(chainId: string, position: number, db: Db = this.pool): Promise<string | null> {
    const [row] = (await db.query(`SELECT hash FROM events WHERE chain_id = $1 AND position = $2`, [
      chainId,
      position,
    ])) as { hash: string }[];
    return row?.hash ?? null;
  }

  /**
   * Hands each event of a whole-chain verification window to `onRow`, in position order. TypeORM
   * hands over whole results; a window is bounded, so that only costs memory (the worker threads
   * stream the same query row by row).
   */
  async streamVerificationWindow(
    window: VerificationWindow,
    onRow: (row: VerificationWindowEventRow) => void,
    db: Db = this.pool,
  ): Promise<void> {
    const { text, values } = verificationWindowEventsQuery(window);
    ((await db.query(text, values)) as VerificationWindowEventRow[]).forEach(onRow);
  }
}
