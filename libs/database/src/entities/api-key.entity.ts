import { Column, Entity, PrimaryColumn } from 'typeorm';
import type { Scope } from '@app/common';

/** A key is stored only as its SHA-256 digest plus a short prefix that people can recognise. */
@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryColumn({ type: 'varchar', length: 30 })
  id!: string;

  @Column({ name: 'account_id', type: 'varchar', length: 30 })
  accountId!: string;

  @Column({ type: 'varchar', length: 16 })
  prefix!: string;

  @Column({ name: 'key_digest', type: 'char', length: 64, unique: true })
  keyDigest!: string;

  @Column({ type: 'text', array: true })
  scopes!: Scope[];

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt!: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', precision: 3, nullable: true })
  revokedAt!: Date | null;
}
