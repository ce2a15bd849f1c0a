import { Check, Column, CreateDateColumn, Entity, Index, PrimaryColumn, Unique } from 'typeorm';
import { ulidAsUuid } from './ulid-uuid.transformer';

/**
 * Migration 1763798400000; ix_accounts_created (GET /v1/accounts, oldest first): 1764520000000;
 * retention and legal hold: 1764800000000.
 */
@Entity({ name: 'accounts' })
@Unique('uq_accounts_name', ['name'])
@Index('ix_accounts_created', ['createdAt', 'id'])
@Check('ck_accounts_retention_days', 'retention_days >= 1 AND retention_days <= 36500')
@Check('ck_accounts_legal_hold', 'NOT legal_hold OR legal_hold_reason IS NOT NULL')
@Check(
  'ck_accounts_legal_hold_by',
  `(legal_hold AND legal_hold_by IN ('operator', 'admin')) OR (NOT legal_hold AND legal_hold_by IS NULL)`,
)
export class AccountEntity {
  @PrimaryColumn({ type: 'uuid', transformer: ulidAsUuid('acc'), primaryKeyConstraintName: 'pk_accounts' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;

  /** The default retention of the account's chains in days; null: keep forever (docs/contract.md §14). */
  @Column({ name: 'retention_days', type: 'integer', nullable: true })
  retentionDays!: number | null;

  @Column({ name: 'legal_hold', type: 'boolean', default: false })
  legalHold!: boolean;

  @Column({ name: 'legal_hold_reason', type: 'text', nullable: true })
  legalHoldReason!: string | null;

  /** Who placed the hold, `operator` or `admin` (only an operator lifts an operator's); null when not held. Migration 1765000000000. */
  @Column({ name: 'legal_hold_by', type: 'varchar', length: 8, nullable: true })
  legalHoldBy!: 'operator' | 'admin' | null;
}
