import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { CheckpointEntity } from '../entities/checkpoint.entity';
import { selectRows, Table } from '../schema/table';
import { Db } from '../transaction-runner';

const checkpoints = new Table(CheckpointEntity, 'k');

/** A stored checkpoint: what was signed (size, root hash), by which key, and the note as served. */
const CHECKPOINT = checkpoints.select('size', 'hash', 'keyId', 'note');
export type CheckpointRow = ReturnType<typeof CHECKPOINT.decode>;

/** Every query of the `checkpoints` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class CheckpointsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** The chain's stored checkpoint of the largest size up to `atMost`, or null when there is none. */
  async findLatest(chainId: string, atMost: number, db: Db = this.pool): Promise<CheckpointRow | null> {
    const size = checkpoints.column('size');
    const [row] = await selectRows(
      db,
      CHECKPOINT,
      `SELECT ${CHECKPOINT.sql} FROM checkpoints k
        WHERE ${checkpoints.column('chainId')} = $1 AND ${size} <= $2 ORDER BY ${size} DESC LIMIT 1`,
      [ulidToUuid(chainId), atMost],
    );
    return row ?? null;
  }

  /** The chain's stored checkpoints of these sizes (those that exist). */
  async findSizes(chainId: string, sizes: readonly number[], db: Db = this.pool): Promise<CheckpointRow[]> {
    if (sizes.length === 0) return [];
    return selectRows(
      db,
      CHECKPOINT,
      `SELECT ${CHECKPOINT.sql} FROM checkpoints k
        WHERE ${checkpoints.column('chainId')} = $1 AND ${checkpoints.column('size')} = ANY($2::int8[])`,
      [ulidToUuid(chainId), [...new Set(sizes)]],
    );
  }

  /** Stores a signed checkpoint unless one of that size exists; true when this call stored it. */
  async insertIfAbsent(
    checkpoint: Pick<CheckpointEntity, 'chainId' | 'size' | 'hash' | 'keyId' | 'note'>,
    db: Db = this.pool,
  ): Promise<boolean> {
    const { chainId, size, hash, keyId, note } = checkpoint;
    const columns = (['chainId', 'size', 'hash', 'keyId', 'note'] as const).map((p) => checkpoints.bare(p));
    const stored = checkpoints.select('size');
    const inserted = await selectRows(
      db,
      stored,
      `INSERT INTO checkpoints AS k (${columns.join(', ')}) VALUES ($1, $2, decode($3, 'hex'), $4, $5)
       ON CONFLICT (${columns[0]}, ${columns[1]}) DO NOTHING RETURNING ${stored.sql}`,
      [ulidToUuid(chainId), size, hash, keyId, note],
    );
    return inserted.length === 1;
  }
}
