import { Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintAsNumber } from './bigint-number.transformer';

/**
 * A chain row is also the chain's head: appends lock it (FOR UPDATE) and move it forward in
 * the same transaction as the events they insert, so the head is always consistent with them.
 */
@Entity({ name: 'chains' })
export class ChainEntity {
  @PrimaryColumn({ type: 'varchar', length: 30 })
  id!: string;

  @Column({ name: 'account_id', type: 'varchar', length: 30 })
  accountId!: string;

  @Column({ type: 'varchar', length: 128 })
  name!: string;

  @Column({ name: 'last_position', type: 'bigint', transformer: bigintAsNumber })
  lastPosition!: number;

  @Column({ name: 'last_hash', type: 'char', length: 64 })
  lastHash!: string;

  @Column({ name: 'last_timestamp', type: 'timestamptz', precision: 3, nullable: true })
  lastTimestamp!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;
}
