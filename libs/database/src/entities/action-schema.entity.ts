import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn, Unique } from 'typeorm';
import { AccountEntity } from './account.entity';
import { ulidAsUuid } from './ulid-uuid.transformer';

/** How an action's schema applies on append (docs/contract.md §19). */
export type SchemaMode = 'warn' | 'enforce';

/**
 * One version of an account's schema for an action or an action pattern (`invoice.*`),
 * docs/contract.md §19, migration 1766200000000. Versions are never changed nor deleted (triggers,
 * for every role): a DELETE adds a version whose `schema` is null. `id` is what an event checked
 * against it stores (events.schema_id, 4 bytes); the account's greatest id is its schema
 * generation, which an append reads under its chains' locks (docs/schemas.md).
 */
@Entity({ name: 'action_schemas' })
@Unique('uq_action_schemas_version', ['accountId', 'action', 'version'])
@Check('ck_action_schemas_version', 'version >= 1')
@Check('ck_action_schemas_mode', `mode IN ('warn', 'enforce')`)
@Index('ix_action_schemas_account_id', ['accountId', 'id'])
export class ActionSchemaEntity {
  @PrimaryGeneratedColumn({ type: 'integer', primaryKeyConstraintName: 'pk_action_schemas' })
  id!: number;

  @Column({ name: 'account_id', type: 'uuid', transformer: ulidAsUuid('acc') })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_action_schemas_account' })
  account?: AccountEntity;

  /** An action name, or a prefix ending in `.*`. */
  @Column({ type: 'text' })
  action!: string;

  @Column({ type: 'integer' })
  version!: number;

  @Column({ type: 'varchar', length: 7 })
  mode!: SchemaMode;

  /** The JSON Schema (2020-12) of `{ actor, resource, context }`; null: the action's schema was deleted. */
  @Column({ type: 'jsonb', nullable: true })
  schema!: Record<string, unknown> | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt!: Date;

  /** The key that made this version. */
  @Column({ name: 'key_id', type: 'varchar', length: 30 })
  keyId!: string;
}
