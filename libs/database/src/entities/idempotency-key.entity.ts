import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { AccountEntity } from './account.entity';
import { ulidAsUuid } from './ulid-uuid.transformer';

/**
 * An Idempotency-Key of POST /v1/events (docs/contract.md §7): claimed before the append, its stored
 * response written in the same transaction as the event; swept by claim time. Migration 1763900000000.
 */
@Entity({ name: 'idempotency_keys' })
@Index('ix_idempotency_keys_claimed', ['claimedAt'])
export class IdempotencyKeyEntity {
  @PrimaryColumn({
    name: 'account_id',
    type: 'uuid',
    transformer: ulidAsUuid('acc'),
    primaryKeyConstraintName: 'pk_idempotency_keys',
  })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_idempotency_keys_account' })
  account?: AccountEntity;

  @PrimaryColumn({ type: 'varchar', length: 255, primaryKeyConstraintName: 'pk_idempotency_keys' })
  key!: string;

  /** SHA-256 (hex) of the request the key was first used with. */
  @Column({ name: 'request_digest', type: 'char', length: 64 })
  requestDigest!: string;

  @Column({ name: 'claimed_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  claimedAt!: Date;

  /** The stored response (JSON text), written with the event; null while the append is in flight. */
  @Column({ type: 'text', nullable: true })
  response!: string | null;
}
