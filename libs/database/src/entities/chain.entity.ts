import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { AccountEntity } from './account.entity';
import { bigintAsNumber } from './bigint-number.transformer';
import { hexBytes } from './hex-bytes.transformer';
import { ulidAsUuid } from './ulid-uuid.transformer';

/**
 * A chain row is also the chain's head: appends lock it (FOR UPDATE) and move it forward in
 * the same transaction as the events they insert, so the head is always consistent with them.
 * Migration 1763798400000; the triggers that keep the head honest are in 1763800000000. Retention,
 * legal hold and what a prune keeps (first retained position, the last pruned event's hash and
 * time): migration 1764800000000.
 */
@Entity({ name: 'chains' })
@Unique('uq_chains_account_name', ['accountId', 'name'])
@Check('ck_chains_last_position', 'last_position >= 0')
@Check('ck_chains_last_hash', 'octet_length(last_hash) = 32')
@Check('ck_chains_pruned_hash', 'octet_length(pruned_hash) = 32')
@Check('ck_chains_retention_days', 'retention_days >= 1 AND retention_days <= 36500')
@Check('ck_chains_legal_hold', 'NOT legal_hold OR legal_hold_reason IS NOT NULL')
@Check(
  'ck_chains_legal_hold_by',
  `(legal_hold AND legal_hold_by IN ('operator', 'admin')) OR (NOT legal_hold AND legal_hold_by IS NULL)`,
)
@Check('ck_chains_first_position', 'first_position >= 1 AND first_position <= last_position + 1')
@Check(
  'ck_chains_pruned',
  '(first_position = 1) = (pruned_hash IS NULL) AND (pruned_hash IS NULL) = (pruned_timestamp IS NULL)',
)
@Check('ck_chains_hash_version', 'hash_version IN (1, 2)')
@Index('ix_chains_account_created', ['accountId', 'createdAt', 'id'])
export class ChainEntity {
  @PrimaryColumn({ type: 'uuid', transformer: ulidAsUuid('chn'), primaryKeyConstraintName: 'pk_chains' })
  id!: string;

  @Column({ name: 'account_id', type: 'uuid', transformer: ulidAsUuid('acc') })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_chains_account' })
  account?: AccountEntity;

  @Column({ type: 'varchar', length: 128 })
  name!: string;

  /** How its events are hashed (docs/contract.md §3, §17): 1 for chains made before migration 1765400000000, else 2. */
  @Column({ name: 'hash_version', type: 'smallint', default: 2 })
  hashVersion!: 1 | 2;

  @Column({ name: 'last_position', type: 'bigint', default: 0, transformer: bigintAsNumber })
  lastPosition!: number;

  /** 32 bytes (hexBytes); the genesis, 32 zero bytes, until the first append. */
  @Column({ name: 'last_hash', type: 'bytea', transformer: hexBytes, default: () => `decode(repeat('00', 32), 'hex')` })
  lastHash!: string;

  @Column({ name: 'last_timestamp', type: 'timestamptz', precision: 3, nullable: true })
  lastTimestamp!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt!: Date;

  /** Days to keep events; null: follow the account (docs/contract.md §14). */
  @Column({ name: 'retention_days', type: 'integer', nullable: true })
  retentionDays!: number | null;

  @Column({ name: 'legal_hold', type: 'boolean', default: false })
  legalHold!: boolean;

  @Column({ name: 'legal_hold_reason', type: 'text', nullable: true })
  legalHoldReason!: string | null;

  /** Who placed the hold, `operator` or `admin` (only an operator lifts an operator's); null when not held. Migration 1765000000000. */
  @Column({ name: 'legal_hold_by', type: 'varchar', length: 8, nullable: true })
  legalHoldBy!: 'operator' | 'admin' | null;

  /** The first retained position: 1 until a prune, lastPosition + 1 when every event was pruned. */
  @Column({ name: 'first_position', type: 'bigint', default: 1, transformer: bigintAsNumber })
  firstPosition!: number;

  /** The hash of the event at firstPosition − 1 (the last pruned), null before any prune. */
  @Column({ name: 'pruned_hash', type: 'bytea', transformer: hexBytes, nullable: true })
  prunedHash!: string | null;

  @Column({ name: 'pruned_timestamp', type: 'timestamptz', precision: 3, nullable: true })
  prunedTimestamp!: Date | null;
}
