import { Check, Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { bigintAsNumber } from './bigint-number.transformer';
import { ulidAsUuid } from './ulid-uuid.transformer';

/**
 * The database's own record of retention (docs/contract.md §14, migration 1765000000000): every change of a
 * chain's or account's retention or legal hold, every prune (a move of a chain's first retained
 * position) and every change of `retention_policy`. Written only by the owner's trigger functions;
 * append-only for every role; the service's role reads it. No foreign keys: a row outlives nothing,
 * and chains and accounts are never deleted.
 */
@Entity({ name: 'retention_log' })
@Check('ck_retention_log_kind', `kind IN ('retention', 'hold.placed', 'hold.lifted', 'pruned', 'policy')`)
@Index('ix_retention_log_chain', ['chainId', 'id'])
@Index('ix_retention_log_account', ['accountId', 'id'])
export class RetentionLogEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'pk_retention_log' })
  id!: string;

  /** The time of the transaction that made the change. */
  @Column({ name: 'logged_at', type: 'timestamptz', precision: 3 })
  loggedAt!: Date;

  @Column({ type: 'varchar', length: 16 })
  kind!: 'retention' | 'hold.placed' | 'hold.lifted' | 'pruned' | 'policy';

  /** Null for `policy`. */
  @Column({ name: 'account_id', type: 'uuid', transformer: ulidAsUuid('acc'), nullable: true })
  accountId!: string | null;

  /** Null for an account's settings and for `policy`. */
  @Column({ name: 'chain_id', type: 'uuid', transformer: ulidAsUuid('chn'), nullable: true })
  chainId!: string | null;

  /** `retention`: the new days (null: forever, or follow the account); `policy`: audit_min_retention_days. */
  @Column({ name: 'retention_days', type: 'integer', nullable: true })
  retentionDays!: number | null;

  /** `hold.placed`: who placed it; `hold.lifted`: who had placed the hold lifted. */
  @Column({ name: 'legal_hold_by', type: 'varchar', length: 8, nullable: true })
  legalHoldBy!: string | null;

  /** `pruned`: the first and last positions it deleted. */
  @Column({ name: 'first_position', type: 'bigint', nullable: true, transformer: bigintAsNumber })
  firstPosition!: number | null;

  @Column({ name: 'last_position', type: 'bigint', nullable: true, transformer: bigintAsNumber })
  lastPosition!: number | null;

  /** `pruned`: the smallest stored checkpoint covering the last pruned position (the prune's authority). */
  @Column({ name: 'checkpoint_size', type: 'bigint', nullable: true, transformer: bigintAsNumber })
  checkpointSize!: number | null;

  /** `policy`: the new hold_release_delay_hours. */
  @Column({ name: 'hold_release_delay_hours', type: 'integer', nullable: true })
  holdReleaseDelayHours!: number | null;

  /** The session's database role (session_user). */
  @Column({ name: 'database_role', type: 'text' })
  databaseRole!: string;
}
