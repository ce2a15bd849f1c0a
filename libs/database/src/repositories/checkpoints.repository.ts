import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Db } from '../transaction-runner';

/** A stored checkpoint: the size as text (bigint). */
export interface CheckpointRow {
  size: string;
  hash: string;
  key_id: string;
  note: string;
}

/** Every query of the `checkpoints` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class CheckpointsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** The chain's stored checkpoint of the largest size up to `atMost`, or null when there is none. */
  async findLatest(chainId: string, atMost: number, db: Db = this.pool): Promise<CheckpointRow | null> {
    const [row] = (await db.query(
      `SELECT size::text AS size, hash, key_id, note FROM checkpoints
        WHERE chain_id = $1 AND size <= $2 ORDER BY checkpoints.size DESC LIMIT 1`,
      [chainId, atMost],
    )) as CheckpointRow[];
    return row ?? null;
  }

  /** The chain's stored checkpoints of these sizes (those that exist). */
  async findSizes(chainId: string, sizes: readonly number[], db: Db = this.pool): Promise<CheckpointRow[]> {
    if (sizes.length === 0) return [];
    return (await db.query(
      `SELECT size::text AS size, hash, key_id, note FROM checkpoints WHERE chain_id = $1 AND size = ANY($2::int8[])`,
      [chainId, [...new Set(sizes)]],
    )) as CheckpointRow[];
  }

  /** Stores a signed checkpoint unless one of that size exists; true when this call stored it. */
  async insertIfAbsent(
    checkpoint: { chainId: string; size: number; hash: string; keyId: string; note: string },
    db: Db = this.pool,
  ): Promise<boolean> {
    const { chainId, size, hash, keyId, note } = checkpoint;
    const inserted = (await db.query(
      `INSERT INTO checkpoints (chain_id, size, hash, key_id, note) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (chain_id, size) DO NOTHING RETURNING size`,
      [chainId, size, hash, keyId, note],
    )) as unknown[];
    return inserted.length === 1;
  }
}
