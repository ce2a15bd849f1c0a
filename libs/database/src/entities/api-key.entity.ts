import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import type { KeyOrigin, Scope } from '@app/common';
import { AccountEntity } from './account.entity';
import { ulidAsUuid } from './ulid-uuid.transformer';

/**
 * A key is stored only as its SHA-256 digest plus a short prefix that people can recognise.
 * Migration 1763798400000; name, origin, expiry, last use and the scopes admin and operator: 1764520000000.
 */
@Entity({ name: 'api_keys' })
@Unique('uq_api_keys_key_digest', ['keyDigest'])
@Check('ck_api_keys_scopes', `scopes <@ ARRAY['ingest','read','admin','operator']::text[] AND cardinality(scopes) > 0`)
@Check('ck_api_keys_origin', `origin IN ('config', 'cli', 'api')`)
@Index('ix_api_keys_account', ['accountId', 'createdAt', 'id'])
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'varchar', length: 30, primaryKeyConstraintName: 'pk_api_keys' })
  id!: string;

  @Column({ name: 'account_id', type: 'uuid', transformer: ulidAsUuid('acc') })
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

  @Column({ type: 'text' })
  name!: string;

  /** `config`: from API_KEYS, which it follows at every start; `cli`, `api`: made by hand, never touched by it. */
  @Column({ type: 'text' })
  origin!: KeyOrigin;

  @Column({ name: 'expires_at', type: 'timestamptz', precision: 3, nullable: true })
  expiresAt!: Date | null;

  @Column({ name: 'last_used_at', type: 'timestamptz', precision: 3, nullable: true })
  lastUsedAt!: Date | null;
}
