import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { bigintAsNumber } from './bigint-number.transformer';
import { hexBytes } from './hex-bytes.transformer';
import { ChainEntity } from './chain.entity';
import { ulidAsUuid } from './ulid-uuid.transformer';

/**
 * A checkpoint the service signed: the chain had `size` events and Merkle root `hash` when it was
 * signed. Kept so that it never signs a smaller size, or the same size with another hash, and so
 * that whole-chain verification can hold the chain against every one of them. Rows are never
 * updated or deleted. The signing key itself is never stored in the database.
 * Migration 1763800000000.
 */
@Entity({ name: 'checkpoints' })
@Check('ck_checkpoints_size', 'size >= 0')
@Check('ck_checkpoints_hash', 'octet_length(hash) = 32')
@Check('ck_checkpoints_key_id', `key_id ~ '^[0-9a-f]{8}$'`)
export class CheckpointEntity {
  @PrimaryColumn({
    name: 'chain_id',
    type: 'uuid',
    transformer: ulidAsUuid('chn'),
    primaryKeyConstraintName: 'pk_checkpoints',
  })
  chainId!: string;

  @ManyToOne(() => ChainEntity, { nullable: false })
  @JoinColumn({ name: 'chain_id', foreignKeyConstraintName: 'fk_checkpoints_chain' })
  chain?: ChainEntity;

  @PrimaryColumn({ type: 'bigint', transformer: bigintAsNumber, primaryKeyConstraintName: 'pk_checkpoints' })
  size!: number;

  /** The Merkle root (docs/contract.md §10) of the first `size` events: 32 bytes stored, 64 lowercase hex characters read (hexBytes). */
  @Column({ type: 'bytea', transformer: hexBytes })
  hash!: string;

  /** Hex key id of the key that signed `note`. */
  @Column({ name: 'key_id', type: 'char', length: 8 })
  keyId!: string;

  /** The signed note exactly as served. */
  @Column({ type: 'text' })
  note!: string;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt!: Date;
}
