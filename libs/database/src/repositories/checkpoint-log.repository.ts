import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { MerkleNode, NodeId, NodeReader } from '@app/hashing';
import {
  CheckpointLogCheckpointEntity,
  CheckpointLogCosignatureEntity,
  CheckpointLogLeafEntity,
  CheckpointLogNodeEntity,
} from '../entities/checkpoint-log.entity';
import { asBoolean, asNumber, computed, selectRows, Table } from '../schema/table';
import { Db } from '../transaction-runner';

const leaves = new Table(CheckpointLogLeafEntity, 'l');
const nodes = new Table(CheckpointLogNodeEntity, 'n');
const checkpoints = new Table(CheckpointLogCheckpointEntity, 'c');
const cosignatures = new Table(CheckpointLogCosignatureEntity, 's');

/** Transaction-level advisory locks (any fixed numbers, distinct from migrate.ts's). Hashes go into SQL as hex, decoded there, as in the other repositories. */
const LEAF_LOCK = 7_301_865_500_001;
const SIGNER_LOCK = 7_301_865_500_002;

const LEAF = leaves.select('leafIndex', 'chainId', 'chainSize', 'note', 'leafHash');
export type CheckpointLogLeafRow = ReturnType<typeof LEAF.decode>;
const LOG_CHECKPOINT = checkpoints.select('size', 'root', 'note');
export type LogCheckpointRow = ReturnType<typeof LOG_CHECKPOINT.decode>;
const COSIGNATURE = cosignatures.select('witness', 'size', 'line');
export type LogCosignatureRow = ReturnType<typeof COSIGNATURE.decode>;
const NODE_HASH = nodes.select('hash');
const SIZE = computed({ size: ['s.size', asNumber] });
const LOCKED = computed({ locked: ['pg_try_advisory_xact_lock($1)', asBoolean] });

/**
 * Every query of the checkpoint log's tables (docs/contract.md §18, migration 1765500000000): the
 * leaves, the tree's nodes, the log checkpoints and their cosignatures. Methods take the
 * transaction's `db` last, defaulting to the pool.
 */
@Injectable()
export class CheckpointLogRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /**
   * Appends a leaf in the caller's transaction (the one storing the chain checkpoint). The lock,
   * held to its commit, gives indices in signing order without a gap: the next transaction reads
   * the largest index only once this one committed or rolled back.
   */
  async appendLeaf(
    leaf: Pick<CheckpointLogLeafEntity, 'chainId' | 'chainSize' | 'note' | 'leafHash'>,
    db: Db,
  ): Promise<number> {
    await db.query('SELECT pg_advisory_xact_lock($1)', [LEAF_LOCK]);
    const columns = (['leafIndex', 'chainId', 'chainSize', 'note', 'leafHash'] as const).map((p) => leaves.bare(p));
    const [row] = await selectRows(
      db,
      leaves.select('leafIndex'),
      `INSERT INTO checkpoint_log_leaves AS l (${columns.join(', ')})
       SELECT coalesce(max(${leaves.bare('leafIndex')}) + 1, 0), $1, $2, $3, decode($4, 'hex') FROM checkpoint_log_leaves
       RETURNING ${leaves.select('leafIndex').sql}`,
      [ulidToUuid(leaf.chainId), leaf.chainSize, leaf.note, leaf.leafHash.toString('hex')],
    );
    return row!.leafIndex;
  }

  /** The one instance signing log checkpoints: true when this transaction now holds the signer's lock. */
  async tryLockSigner(db: Db): Promise<boolean> {
    const [row] = await selectRows(db, LOCKED, `SELECT ${LOCKED.sql}`, [SIGNER_LOCK]);
    return row!.locked;
  }

  /** The number of leaves (indices have no gap). */
  async size(db: Db = this.pool): Promise<number> {
    const [row] = await selectRows(
      db,
      SIZE,
      `SELECT ${SIZE.sql} FROM (SELECT coalesce(max(${leaves.bare('leafIndex')}) + 1, 0) AS size FROM checkpoint_log_leaves) s`,
    );
    return row!.size;
  }

  /** Leaf hashes of [from, to), in index order. */
  async leafHashes(from: number, to: number, db: Db): Promise<Buffer[]> {
    const index = leaves.column('leafIndex');
    const rows = await selectRows(
      db,
      leaves.select('leafHash'),
      `SELECT ${leaves.select('leafHash').sql} FROM checkpoint_log_leaves l WHERE ${index} >= $1 AND ${index} < $2 ORDER BY ${index}`,
      [from, to],
    );
    return rows.map((row) => row.leafHash);
  }

  /** The chain's latest leaf below `size` (a log checkpoint's), or null. */
  async latestLeafOf(chainId: string, size: number, db: Db = this.pool): Promise<CheckpointLogLeafRow | null> {
    const index = leaves.column('leafIndex');
    const [row] = await selectRows(
      db,
      LEAF,
      `SELECT ${LEAF.sql} FROM checkpoint_log_leaves l
        WHERE ${leaves.column('chainId')} = $1 AND ${index} < $2 ORDER BY ${index} DESC LIMIT 1`,
      [ulidToUuid(chainId), size],
    );
    return row ?? null;
  }

  async insertNodes(made: readonly MerkleNode[], db: Db): Promise<void> {
    if (made.length === 0) return;
    await db.query(
      `INSERT INTO checkpoint_log_nodes (${nodes.bare('level')}, ${nodes.bare('index')}, ${nodes.bare('hash')})
       SELECT w.level, w.idx, decode(w.hash, 'hex') FROM unnest($1::int2[], $2::int8[], $3::text[]) AS w(level, idx, hash)`,
      [made.map((n) => n.level), made.map((n) => n.index), made.map((n) => n.hash.toString('hex'))],
    );
  }

  /** Reads stored nodes in the order asked (every one must exist). */
  reader(db: Db = this.pool): NodeReader {
    return async (ids: readonly NodeId[]) => {
      const rows = await selectRows(
        db,
        NODE_HASH,
        `SELECT ${NODE_HASH.sql} FROM unnest($1::int2[], $2::int8[]) WITH ORDINALITY AS w(level, idx, at)
           JOIN checkpoint_log_nodes n ON ${nodes.column('level')} = w.level AND ${nodes.column('index')} = w.idx
          ORDER BY w.at`,
        [ids.map((id) => id.level), ids.map((id) => id.index)],
      );
      if (rows.length !== ids.length) throw new Error(`the checkpoint log lacks ${ids.length - rows.length} node(s)`);
      return rows.map((row) => row.hash);
    };
  }

  async insertCheckpoint(checkpoint: LogCheckpointRow, db: Db): Promise<void> {
    const columns = (['size', 'root', 'note'] as const).map((p) => checkpoints.bare(p));
    await db.query(
      `INSERT INTO checkpoint_log_checkpoints (${columns.join(', ')}) VALUES ($1, decode($2, 'hex'), $3)`,
      [checkpoint.size, checkpoint.root.toString('hex'), checkpoint.note],
    );
  }

  /** The log checkpoint of the largest size up to `atMost`, or null. */
  async latestCheckpoint(atMost = Number.MAX_SAFE_INTEGER, db: Db = this.pool): Promise<LogCheckpointRow | null> {
    const size = checkpoints.column('size');
    const [row] = await selectRows(
      db,
      LOG_CHECKPOINT,
      `SELECT ${LOG_CHECKPOINT.sql} FROM checkpoint_log_checkpoints c WHERE ${size} <= $1 ORDER BY ${size} DESC LIMIT 1`,
      [atMost],
    );
    return row ?? null;
  }

  async checkpointOfSize(size: number, db: Db = this.pool): Promise<LogCheckpointRow | null> {
    const [row] = await selectRows(
      db,
      LOG_CHECKPOINT,
      `SELECT ${LOG_CHECKPOINT.sql} FROM checkpoint_log_checkpoints c WHERE ${checkpoints.column('size')} = $1`,
      [size],
    );
    return row ?? null;
  }

  /** Log checkpoints with at least `count` stored cosignatures from these witnesses, newest first. */
  async cosignedCheckpoints(
    witnesses: readonly string[],
    count: number,
    limit: number,
    db: Db = this.pool,
  ): Promise<LogCheckpointRow[]> {
    const size = checkpoints.column('size');
    return selectRows(
      db,
      LOG_CHECKPOINT,
      `SELECT ${LOG_CHECKPOINT.sql} FROM checkpoint_log_checkpoints c
        WHERE (SELECT count(*) FROM checkpoint_log_cosignatures s
                WHERE ${cosignatures.column('size')} = ${size} AND ${cosignatures.column('witness')} = ANY($1::text[])) >= $2
        ORDER BY ${size} DESC LIMIT $3`,
      [witnesses, count, limit],
    );
  }

  /** The largest size this witness cosigned, 0 when none. */
  async cosignedSize(witness: string, db: Db = this.pool): Promise<number> {
    const [row] = await selectRows(
      db,
      SIZE,
      `SELECT ${SIZE.sql} FROM (SELECT coalesce(max(${cosignatures.column('size')}), 0) AS size
         FROM checkpoint_log_cosignatures s WHERE ${cosignatures.column('witness')} = $1) s`,
      [witness],
    );
    return row!.size;
  }

  async insertCosignature(row: LogCosignatureRow, db: Db = this.pool): Promise<void> {
    const columns = (['witness', 'size', 'line'] as const).map((p) => cosignatures.bare(p));
    await db.query(
      `INSERT INTO checkpoint_log_cosignatures (${columns.join(', ')}) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
      [row.witness, row.size, row.line],
    );
  }

  async cosignaturesOf(size: number, db: Db = this.pool): Promise<LogCosignatureRow[]> {
    return selectRows(
      db,
      COSIGNATURE,
      `SELECT ${COSIGNATURE.sql} FROM checkpoint_log_cosignatures s WHERE ${cosignatures.column('size')} = $1
        ORDER BY ${cosignatures.column('witness')}`,
      [size],
    );
  }
}
