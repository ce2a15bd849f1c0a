import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { AccountEntity } from './account.entity';
import { ulidAsUuid } from './ulid-uuid.transformer';

/**
 * An Idempotency-Key of POST /v1/events (docs/contract.md §7): written with its stored response in the
 * append's transaction (the key locked there, docs/contract.md §21); swept by claim time (the first
 * use). Migration 1763900000000.
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

  /**
   * The stored response (JSON text), written with the event. Null only in a claim an earlier version
   * made before its append and never freed: the next request with the key takes it over.
   */
  @Column({ type: 'text', nullable: true })
  response!: string | null;
}
