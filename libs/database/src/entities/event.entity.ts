import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn, Unique } from 'typeorm';
import { bigintAsNumber } from './bigint-number.transformer';
import { hexBytes } from './hex-bytes.transformer';
import { ulidAsUuid } from './ulid-uuid.transformer';
import { ChainEntity } from './chain.entity';

/** A value per personal field of a version-2 event, by field: salts or commitments (64 hex characters). */
export interface FieldValues {
  actor?: string;
  resource?: string;
  context?: Record<string, string>;
}

/** What an erasure leaves of a version-2 event's hashing secrets (migration 1765400000000). */
export interface StoredErasure {
  salts: FieldValues;
  commitments: FieldValues;
}

/**
 * One appended audit event. Rows are never updated or deleted (triggers, migration
 * 1763800000000). `createdAt` is `timestamp`. `uq_events_chain_position` is what stops a chain
 * forking. Every listing filter has an index that starts with the account (or chain) and goes on in
 * timestamp order (the keyset is (timestamp, id); the filters' indexes end in timestamp and the events of one
 * millisecond are sorted by id after them, an incremental sort); the live tail has one in its own order
 * (migration 1765200000000).
 */
@Entity({ name: 'events' })
@Unique('uq_events_chain_position', ['chainId', 'position'])
@Check('ck_events_position', 'position >= 1')
@Check('ck_events_hash', 'octet_length(hash) = 32')
@Check('ck_events_previous_hash', 'octet_length(previous_hash) = 32')
@Check('ck_events_salt_seed', 'octet_length(salt_seed) = 16')
@Check('ck_events_actor', 'actor IS NOT NULL OR erasure IS NOT NULL')
@Check('ck_events_schema', '(schema_id IS NULL) = (schema_valid IS NULL)')
@Index('ix_events_account_time', ['accountId', 'timestamp', 'id'])
@Index('ix_events_account_tail', ['accountId', 'timestamp', 'chainId', 'position'])
@Index('ix_events_account_actor', ['accountId', 'actor', 'timestamp'])
@Index('ix_events_account_action', ['accountId', 'action', 'timestamp'])
@Index('ix_events_account_resource', ['accountId', 'resource', 'timestamp'])
@Index('ix_events_chain_time', ['chainId', 'timestamp'])
@Index('ix_events_account_txid', ['accountId', 'txid'])
// GIN (context jsonb_path_ops), migration 1764700000000: TypeORM cannot declare an operator class, so
// the schema builder leaves it alone and migration:check compares its definition (schema-drift.ts).
@Index('ix_events_context', { synchronize: false })
export class EventEntity {
  /** `evt_` and a ULID, stored as the ULID's 16 bytes (migration 1765900000000). */
  @PrimaryColumn({ type: 'uuid', transformer: ulidAsUuid('evt'), primaryKeyConstraintName: 'pk_events' })
  id!: string;

  /** No foreign key: the chain's account is the event's account. */
  @Column({ name: 'account_id', type: 'uuid', transformer: ulidAsUuid('acc') })
  accountId!: string;

  @Column({ name: 'chain_id', type: 'uuid', transformer: ulidAsUuid('chn') })
  chainId!: string;

  @ManyToOne(() => ChainEntity, { nullable: false })
  @JoinColumn({ name: 'chain_id', foreignKeyConstraintName: 'fk_events_chain' })
  chain?: ChainEntity;

  @Column({ type: 'bigint', transformer: bigintAsNumber })
  position!: number;

  /** Null once erased (docs/contract.md §17: only then, ck_events_actor). */
  @Column({ type: 'text', nullable: true })
  actor!: string | null;

  @Column({ type: 'text' })
  action!: string;

  @Column({ type: 'text', nullable: true })
  resource!: string | null;

  @Column({ type: 'jsonb', nullable: true })
  context!: Record<string, unknown> | null;

  @Column({ type: 'timestamptz', precision: 3 })
  timestamp!: Date;

  @Column({ name: 'previous_hash', type: 'bytea', transformer: hexBytes })
  previousHash!: string;

  @Column({ type: 'bytea', transformer: hexBytes })
  hash!: string;

  /** The inserting transaction's id (migration 1764600000000): what the live tail reads by. Null before it. */
  /**
   * Version-2 events (docs/contract.md §17): 16 random bytes from which each field's salt is derived
   * (docs/hashing.md, "Version 2"); null on version-1 events, and once an erasure has deleted it.
   */
  @Column({ name: 'salt_seed', type: 'bytea', transformer: hexBytes, nullable: true })
  saltSeed!: string | null;

  /** After an erasure: the salts of the fields still held, the commitments of the erased ones. Null before. */
  @Column({ type: 'jsonb', nullable: true })
  erasure!: StoredErasure | null;

  /**
   * The action schema version (action_schemas.id) that checked this event on append, and whether
   * the event satisfied it (docs/contract.md §19): outside the hashed members. Both null for an
   * event whose action had no schema (migration 1766200000000).
   */
  @Column({ name: 'schema_id', type: 'integer', nullable: true })
  schemaId!: number | null;

  @Column({ name: 'schema_valid', type: 'boolean', nullable: true })
  schemaValid!: boolean | null;

  @Column({ type: 'bigint', nullable: true, default: () => 'audit_current_txid()' })
  txid!: string | null;
}
