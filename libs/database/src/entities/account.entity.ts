import { Column, CreateDateColumn, Entity, PrimaryColumn, Unique } from 'typeorm';

/** Migration 1763798400000. */
@Entity({ name: 'accounts' })
@Unique('uq_accounts_name', ['name'])
export class AccountEntity {
  @PrimaryColumn({ type: 'varchar', length: 30, primaryKeyConstraintName: 'pk_accounts' })
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz', precision: 3 })
  createdAt!: Date;
}
