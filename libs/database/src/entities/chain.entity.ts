import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { AccountEntity } from './account.entity';
import { bigintAsNumber } from './bigint-number.transformer';

/**
 * A chain row is also the chain's head: appends lock it (FOR UPDATE) and move it forward in
 * the same transaction as the events they insert, so the head is always consistent with them.
 * Migration 1763798400000; the triggers that keep the head honest are in 1763800000000.
 */
@Entity({ name: 'chains' })
@Unique('uq_chains_account_name', ['accountId', 'name'])
@Check('ck_chains_last_position', 'last_position >= 0')
@Index('ix_chains_account_created', ['accountId', 'createdAt', 'id'])
export class ChainEntity {
  @PrimaryColumn({ type: 'varchar', length: 30, primaryKeyConstraintName: 'pk_chains' })
  id!: string;

  @Column({ name: 'account_id', type: 'varchar', length: 30 })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_chains_account' })
  account?: AccountEntity;

  @Column({ type: 'varchar', length: 128 })
  name!: string;

  @Column({ name: 'last_position', type: 'bigint', default: 0, transformer: bigintAsNumber })
  lastPosition!: number;

  @Column({ name: 'last_hash', type: 'char', length: 64, default: () => `repeat('0', 64)` })
  lastHash!: string;

  @Column({ name: 'last_timestamp', type: 'timestamptz', precision: 3, nullable: true })
  lastTimestamp!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt!: Date;
}
