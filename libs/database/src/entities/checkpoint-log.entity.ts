import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { bigintAsNumber } from './bigint-number.transformer';
import { ChainEntity } from './chain.entity';
import { ulidAsUuid } from './ulid-uuid.transformer';

/*
 * The checkpoint log (docs/contract.md §18, migration 1765500000000): an RFC 9162 tree over every
 * chain checkpoint the service signed, in signing order, its signed checkpoints and the witnesses'
 * cosignatures. Rows are never updated or deleted.
 */

/** Leaf `leafIndex`: a chain checkpoint's signed note as served; leaf hash SHA-256(0x00 ‖ UTF-8 note). */
@Entity({ name: 'checkpoint_log_leaves' })
@Index('ix_checkpoint_log_leaves_chain', ['chainId', 'leafIndex'])
@Check('ck_checkpoint_log_leaves_index', 'leaf_index >= 0')
@Check('ck_checkpoint_log_leaves_hash', 'octet_length(leaf_hash) = 32')
export class CheckpointLogLeafEntity {
  @PrimaryColumn({
    name: 'leaf_index',
    type: 'bigint',
    transformer: bigintAsNumber,
    primaryKeyConstraintName: 'pk_checkpoint_log_leaves',
  })
  leafIndex!: number;

  @Column({ name: 'chain_id', type: 'uuid', transformer: ulidAsUuid('chn') })
  chainId!: string;

  @ManyToOne(() => ChainEntity, { nullable: false })
  @JoinColumn({ name: 'chain_id', foreignKeyConstraintName: 'fk_checkpoint_log_leaves_chain' })
  chain?: ChainEntity;

  /** The chain checkpoint's size. */
  @Column({ name: 'chain_size', type: 'bigint', transformer: bigintAsNumber })
  chainSize!: number;

  /** The signed note, byte-identical to what GET /v1/chain/:chainId/checkpoint served. */
  @Column({ type: 'text' })
  note!: string;

  @Column({ name: 'leaf_hash', type: 'bytea' })
  leafHash!: Buffer;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt!: Date;
}

/** A perfect subtree of the log: leaves [index·2^level, (index+1)·2^level); level 0 holds the leaf hashes. */
@Entity({ name: 'checkpoint_log_nodes' })
@Check('ck_checkpoint_log_nodes_level', 'level >= 0 AND level <= 62')
@Check('ck_checkpoint_log_nodes_index', `"index" >= 0`)
@Check('ck_checkpoint_log_nodes_hash', 'octet_length(hash) = 32')
export class CheckpointLogNodeEntity {
  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'pk_checkpoint_log_nodes' })
  level!: number;

  @PrimaryColumn({ type: 'bigint', transformer: bigintAsNumber, primaryKeyConstraintName: 'pk_checkpoint_log_nodes' })
  index!: number;

  @Column({ type: 'bytea' })
  hash!: Buffer;
}

/** A signed checkpoint of the log (origin CHECKPOINT_LOG_ORIGIN). */
@Entity({ name: 'checkpoint_log_checkpoints' })
@Check('ck_checkpoint_log_checkpoints_size', 'size > 0')
@Check('ck_checkpoint_log_checkpoints_root', 'octet_length(root) = 32')
export class CheckpointLogCheckpointEntity {
  @PrimaryColumn({
    type: 'bigint',
    transformer: bigintAsNumber,
    primaryKeyConstraintName: 'pk_checkpoint_log_checkpoints',
  })
  size!: number;

  @Column({ type: 'bytea' })
  root!: Buffer;

  /** The signed note (the log's signature only; cosignatures are rows of checkpoint_log_cosignatures). */
  @Column({ type: 'text' })
  note!: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt!: Date;
}

/** A witness's cosignature line of the log checkpoint of `size`, verified before it was stored. */
@Entity({ name: 'checkpoint_log_cosignatures' })
@Index('ix_checkpoint_log_cosignatures_size', ['size'])
export class CheckpointLogCosignatureEntity {
  /** The witness's cosignature/v1 verifier key. */
  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'pk_checkpoint_log_cosignatures' })
  witness!: string;

  @PrimaryColumn({
    type: 'bigint',
    transformer: bigintAsNumber,
    primaryKeyConstraintName: 'pk_checkpoint_log_cosignatures',
  })
  size!: number;

  @ManyToOne(() => CheckpointLogCheckpointEntity, { nullable: false })
  @JoinColumn({ name: 'size', foreignKeyConstraintName: 'fk_checkpoint_log_cosignatures_checkpoint' })
  checkpoint?: CheckpointLogCheckpointEntity;

  /** `— <name> <base64>\n` */
  @Column({ type: 'text' })
  line!: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt!: Date;
}
