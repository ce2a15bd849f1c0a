import { Check, Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { AccountEntity } from './account.entity';
import { bigintAsNumber } from './bigint-number.transformer';
import { ulidAsUuid } from './ulid-uuid.transformer';

export type DestinationState = 'active' | 'retrying' | 'paused' | 'disabled';

/** A live-tail stream position (apps/api/src/events/stream/stream-position.ts), as stored. */
export interface StoredStreamPosition {
  since: string;
  until: string | null;
  after: { time: string; chainId: string; position: number } | null;
}

/** A destination's last failed attempt: when, the receiver's HTTP status (null: none) and what went wrong. */
export interface DestinationError {
  at: string;
  status: number | null;
  message: string;
}

/** A stream destination (docs/contract.md §16) and where its delivery stands. Migrations 1765100000000, 1766050000000. */
@Entity({ name: 'destinations' })
@Check('ck_destinations_kind', `kind IN ('webhook', 'splunk_hec', 'datadog', 'otlp', 'syslog', 'nats')`)
@Check('ck_destinations_format', `format IN ('native', 'ocsf', 'cef')`)
@Check('ck_destinations_state', `state IN ('active', 'retrying', 'paused', 'disabled')`)
@Check('ck_destinations_batch_size', `batch_size BETWEEN 1 AND 1000`)
@Check('ck_destinations_timeout', `timeout_seconds BETWEEN 1 AND 30`)
@Index('ix_destinations_account', ['accountId', 'createdAt', 'id'])
@Index('ix_destinations_lease', ['state', 'leaseUntil'])
export class DestinationEntity {
  @PrimaryColumn({ type: 'varchar', length: 30, primaryKeyConstraintName: 'pk_destinations' })
  id!: string;

  @Column({ name: 'account_id', type: 'uuid', transformer: ulidAsUuid('acc') })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { nullable: false })
  @JoinColumn({ name: 'account_id', foreignKeyConstraintName: 'fk_destinations_account' })
  account?: AccountEntity;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'varchar', length: 16 })
  kind!: string;

  @Column({ type: 'text' })
  url!: string;

  @Column({ type: 'varchar', length: 8 })
  format!: string;

  @Column({ type: 'text', nullable: true })
  q!: string | null;

  @Column({ name: 'batch_size', type: 'integer' })
  batchSize!: number;

  @Column({ name: 'timeout_seconds', type: 'integer' })
  timeoutSeconds!: number;

  /** What a kind takes besides its URL that is no secret (splunk_hec: sourcetype, index). */
  @Column({ type: 'jsonb' })
  options!: Record<string, string>;

  /** The credentials, sealed (apps/api/src/streams/secret-box.ts). */
  @Column({ type: 'bytea' })
  secrets!: Buffer;

  /** `now`, `beginning` or the ISO time given at creation. */
  @Column({ type: 'text' })
  start!: string;

  @Column({ type: 'varchar', length: 8 })
  state!: DestinationState;

  @Column({ type: 'integer', default: 1 })
  version!: number;

  /** The stream position after the last acknowledged event. */
  @Column({ type: 'jsonb' })
  position!: StoredStreamPosition;

  @Column({ name: 'delivered_events', type: 'bigint', default: 0, transformer: bigintAsNumber })
  deliveredEvents!: number;

  @Column({ name: 'last_delivered_at', type: 'timestamptz', precision: 3, nullable: true })
  lastDeliveredAt!: Date | null;

  @Column({ name: 'last_delivered_event_at', type: 'timestamptz', precision: 3, nullable: true })
  lastDeliveredEventAt!: Date | null;

  /** The last read found nothing more to deliver. */
  @Column({ name: 'caught_up', type: 'boolean', default: false })
  caughtUp!: boolean;

  @Column({ name: 'consecutive_failures', type: 'integer', default: 0 })
  consecutiveFailures!: number;

  @Column({ name: 'failing_since', type: 'timestamptz', precision: 3, nullable: true })
  failingSince!: Date | null;

  @Column({ name: 'last_error', type: 'jsonb', nullable: true })
  lastError!: DestinationError | null;

  /**
   * The backoff after the last failed attempt: no attempt before this time (its exponent is
   * `consecutiveFailures`). Kept through pause, resume, replay and changes (docs/contract.md §16).
   */
  @Column({ name: 'retry_at', type: 'timestamptz', precision: 3, nullable: true })
  retryAt!: Date | null;

  /** The last accepted `replay` (at most one a minute). */
  @Column({ name: 'replayed_at', type: 'timestamptz', precision: 3, nullable: true })
  replayedAt!: Date | null;

  /** The last accepted `resume` (at most one a minute). */
  @Column({ name: 'resumed_at', type: 'timestamptz', precision: 3, nullable: true })
  resumedAt!: Date | null;

  @Column({ name: 'lease_owner', type: 'varchar', length: 40, nullable: true })
  leaseOwner!: string | null;

  @Column({ name: 'lease_until', type: 'timestamptz', precision: 3, nullable: true })
  leaseUntil!: Date | null;

  @Column({ name: 'created_at', type: 'timestamptz', precision: 3, default: () => 'now()' })
  createdAt!: Date;
}
