import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Db } from '../transaction-runner';

/** The head of a chain as verification reads it. */
export interface ChainHeadRow {
  id: string;
  accountId: string;
  lastPosition: number;
  lastHash: string;
}

/** The head now, and what lies above it (whole-chain verification's last look). */
export interface HeadFacts {
  position: number;
  checkpointsAbove: number;
  smallestAbove: number;
  eventsBeyond: number;
  firstBeyond: number;
}

/** Every query of the `chains` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class ChainsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** The account's chain head; null for an unknown chain or another account's. */
  async findHead(accountId: string, chainId: string, db: Db = this.pool): Promise<ChainHeadRow | null> {
    const [row] = (await db.query(
      `SELECT id, account_id AS "accountId", last_position::float8 AS "lastPosition", last_hash AS "lastHash"
         FROM chains WHERE id = $1 AND account_id = $2`,
      [chainId, accountId],
    )) as ChainHeadRow[];
    return row ?? null;
  }

  /**
   * The account's chain head, locked FOR SHARE until the transaction ends: appends (which take it
   * FOR UPDATE) wait, other readers do not. Null for an unknown chain or another account's.
   */
  async lockHeadForShare(
    accountId: string,
    chainId: string,
    db: Db = this.pool,
  ): Promise<{ size: number; hash: string } | null> {
    const [row] = (await db.query(
      `SELECT last_position::text AS size, last_hash FROM chains WHERE id = $1 AND account_id = $2 FOR SHARE`,
      [chainId, accountId],
    )) as { size: string; last_hash: string }[];
    return row ? { size: Number(row.size), hash: row.last_hash } : null;
  }

  /** The head now, and what lies above it, read in one statement (one snapshot). */
  async headFacts(chainId: string, db: Db = this.pool): Promise<HeadFacts> {
    const [row] = (await db.query(
      `SELECT c.last_position::text AS position,
              (SELECT count(*) FROM checkpoints k WHERE k.chain_id = c.id AND k.size > c.last_position)::int AS checkpoints_above,
              (SELECT min(k.size) FROM checkpoints k WHERE k.chain_id = c.id AND k.size > c.last_position)::text AS smallest_above,
              (SELECT count(*) FROM events e WHERE e.chain_id = c.id AND e.position > c.last_position)::int AS events_beyond,
              (SELECT min(e.position) FROM events e WHERE e.chain_id = c.id AND e.position > c.last_position)::text AS first_beyond
         FROM chains c WHERE c.id = $1`,
      [chainId],
    )) as {
      position: string;
      checkpoints_above: number;
      smallest_above: string | null;
      events_beyond: number;
      first_beyond: string | null;
    }[];
    return {
      position: Number(row?.position ?? 0),
      checkpointsAbove: row?.checkpoints_above ?? 0,
      smallestAbove: Number(row?.smallest_above ?? 0),
      eventsBeyond: row?.events_beyond ?? 0,
      firstBeyond: Number(row?.first_beyond ?? 0),
    };
  }
}
