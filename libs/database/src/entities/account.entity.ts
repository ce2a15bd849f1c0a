import { Column, CreateDateColumn, Entity, Index, PrimaryColumn, Unique } from 'typeorm';

/** Migration 1763798400000; ix_accounts_created (GET /v1/accounts, oldest first): 1764520000000. */
@Entity({ name: 'accounts' })
@Unique('uq_accounts_name', ['name'])
@Index('ix_accounts_created', ['createdAt', 'id'])
export class AccountEntity {
  @PrimaryColumn({ type: 'varchar', length: 30, primaryKeyConstraintName: 'pk_accounts' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;
}
