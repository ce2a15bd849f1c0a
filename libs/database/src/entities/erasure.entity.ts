import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { AccountEntity } from './account.entity';
import { ulidAsUuid } from './ulid-uuid.transformer';

/**
 * An erasure (docs/contract.md §17, migration 1765600000000): who erased which fields of how many
 * events, and why. Never the query, nor a value. Written by audit_erase_events alone, in the
 * erasure's transaction, and append-only for every role (1766000000000).
 */
@Entity({ name: 'erasures' })
@Check('ck_erasures_counts', 'events >= 0 AND skipped >= 0')
@Index('ix_erasures_account_at', ['accountId', 'at', 'id'])
export class ErasureEntity {
  @PrimaryColumn({ type: 'varchar', length: 30, primaryKeyConstraintName: 'pk_erasures' })
  id!: string;

  @Column({ name: 'account_id', type: 'uuid', transformer: ulidAsUuid('acc') })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_erasures_account' })
  account?: AccountEntity;

  @Column({ type: 'timestamptz', precision: 3, default: () => 'now()' })
  at!: Date;

  /** The key that asked; null for an erasure made by calling audit_erase_events by hand (1766000000000). */
  @Column({ name: 'key_id', type: 'varchar', length: 30, nullable: true })
  keyId!: string | null;

  /** The events erased. */
  @Column({ type: 'integer' })
  events!: number;

  /** Matching events on version-1 chains left as they were (`allowPartial`). */
  @Column({ type: 'integer' })
  skipped!: number;

  /** The field paths asked for, as given (`actor`, `resource`, `context.<m>`, `context.*`). */
  @Column({ type: 'text', array: true })
  fields!: string[];

  /** Null for an erasure made by hand. */
  @Column({ type: 'text', nullable: true })
  reason!: string | null;
}
