import { Check, Column, Entity, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import type { Scope } from '@app/common';
import { AccountEntity } from './account.entity';

/**
 * A key is stored only as its SHA-256 digest plus a short prefix that people can recognise.
 * Migration 1763798400000.
 */
@Entity({ name: 'api_keys' })
@Unique('uq_api_keys_key_digest', ['keyDigest'])
@Check('ck_api_keys_scopes', `scopes <@ ARRAY['ingest','read']::text[] AND cardinality(scopes) > 0`)
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'varchar', length: 30, primaryKeyConstraintName: 'pk_api_keys' })
  id!: string;

  @Column({ name: 'account_id', type: 'varchar', length: 30 })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_api_keys_account' })
  account?: AccountEntity;

  @Column({ type: 'varchar', length: 16 })
  prefix!: string;

  @Column({ name: 'key_digest', type: 'char', length: 64 })
  keyDigest!: string;

  @Column({ type: 'text', array: true })
  scopes!: Scope[];

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', precision: 3, nullable: true })
  revokedAt!: Date | null;
}
