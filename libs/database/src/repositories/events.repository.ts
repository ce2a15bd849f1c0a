import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { EventHashPayload } from '@app/hashing';
import { Db } from '../transaction-runner';

/** A stored event as verification reads it: exactly the hash payload, as hashed, and its stored hash. */
export interface VerifiedEventRow extends EventHashPayload {
  hash: string;
}

/** A row of a whole-chain verification window: also whether its account is its chain's. */
export interface VerificationWindowEventRow extends VerifiedEventRow {
  ownAccount: boolean;
}

/** What a whole-chain verification window covers: positions after < position <= upTo of one chain. */
export interface VerificationWindow {
  chainId: string;
  accountId: string;
  after: number;
  upTo: number;
}

/** The timestamp written by the database exactly as the API writes it (no Date per row). */
const ISO_TIMESTAMP = `to_char("timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The events of a whole-chain verification window, used by EventsRepository on the service's pool
 * and by the worker threads (apps/api/src/verification/chain-window.worker.ts) on their own
 * connections outside Nest. Only what is hashed or checked, already named and typed as the hash
 * payload: the account as one boolean, the position as float8 (exact below 2^53, parsed to a
 * number), the timestamp formatted by the database. An honest window holds at most upTo − after
 * events (positions are unique); one more is read so that duplicates, should the constraint be
 * gone, still show while the window stays bounded.
 */
export function verificationWindowEventsQuery({ chainId, accountId, after, upTo }: VerificationWindow): {
  text: string;
  values: unknown[];
} {
  return {
    text: `SELECT id, $1::varchar AS "chainId", position::float8 AS position, actor, action, resource, context,
        ${ISO_TIMESTAMP} AS "timestamp", previous_hash AS "previousHash", hash, account_id = $5 AS "ownAccount"
   FROM events
  WHERE chain_id = $1 AND events.position > $2 AND events.position <= $3
  ORDER BY events.position
  LIMIT $4`,
    values: [chainId, after, upTo, upTo - after + 1, accountId],
  };
}

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
