import { Column, Entity, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { bigintAsNumber } from './bigint-number.transformer';
import { ChainEntity } from './chain.entity';

/** One appended audit event. Rows are never updated or deleted. `createdAt` is `timestamp`. */
@Entity({ name: 'events' })
export class EventEntity {
  @PrimaryColumn({ type: 'varchar', length: 30 })
  id!: string;

  @Column({ name: 'account_id', type: 'varchar', length: 30 })
  accountId!: string;

  @Column({ name: 'chain_id', type: 'varchar', length: 30 })
  chainId!: string;

  @ManyToOne(() => ChainEntity, { createForeignKeyConstraints: false })
  @JoinColumn({ name: 'chain_id' })
  chain?: ChainEntity;

  @Column({ type: 'bigint', transformer: bigintAsNumber })
  position!: number;

  @Column({ type: 'text' })
  actor!: string;

  @Column({ type: 'text' })
  action!: string;

  @Column({ type: 'text', nullable: true })
  resource!: string | null;

  @Column({ type: 'jsonb', nullable: true })
  context!: Record<string, unknown> | null;

  @Column({ type: 'timestamptz', precision: 3 })
  timestamp!: Date;

  @Column({ name: 'previous_hash', type: 'char', length: 64 })
  previousHash!: string;

  @Column({ type: 'char', length: 64 })
  hash!: string;
}
