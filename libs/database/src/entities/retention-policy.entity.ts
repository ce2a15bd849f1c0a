import { Check, Column, Entity, PrimaryColumn } from 'typeorm';

/**
 * What the database enforces of retention whoever calls it (docs/contract.md §14, migration
 * 1765000000000): one row, written by the schema's owner only (a service running as the owner
 * writes HOLD_RELEASE_DELAY_HOURS and AUDIT_MIN_RETENTION_DAYS there at start); each change is in
 * retention_log.
 */
@Entity({ name: 'retention_policy' })
@Check('ck_retention_policy_one_row', 'id')
@Check(
  'ck_retention_policy_values',
  'hold_release_delay_hours >= 0 AND hold_release_delay_hours <= 8784 AND audit_min_retention_days >= 1 AND audit_min_retention_days <= 36500',
)
export class RetentionPolicyEntity {
  @PrimaryColumn({ type: 'boolean', default: true, primaryKeyConstraintName: 'pk_retention_policy' })
  id!: boolean;

  @Column({ name: 'hold_release_delay_hours', type: 'integer' })
  holdReleaseDelayHours!: number;

  @Column({ name: 'audit_min_retention_days', type: 'integer' })
  auditMinRetentionDays!: number;
}
