import { Column, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';
import { bigintAsNumber } from './bigint-number.transformer';
import { ulidAsUuid } from './ulid-uuid.transformer';

/**
 * The database's own record of what each erasure changed (docs/contract.md §17, migration
 * 1766000000000): one row per event an UPDATE of events erased fields of, with the field paths it
 * newly erased. Written only by the owner's trigger on events (whoever erases, by whatever path);
 * append-only for every role; the service's role reads it, and verification holds every erased
 * field against it. No foreign keys: a row outlives a pruned event.
 */
@Entity({ name: 'erasure_events' })
@Index('ix_erasure_events_chain_position', ['chainId', 'position'])
@Index('ix_erasure_events_erasure', ['erasureId'])
export class ErasureEventEntity {
  @PrimaryGeneratedColumn({ type: 'bigint', primaryKeyConstraintName: 'pk_erasure_events' })
  id!: string;

  /** The erasure (`erasures.id`); null for events erased before the database kept this record. */
  @Column({ name: 'erasure_id', type: 'varchar', length: 30, nullable: true })
  erasureId!: string | null;

  @Column({ name: 'account_id', type: 'uuid', transformer: ulidAsUuid('acc') })
  accountId!: string;

  @Column({ name: 'chain_id', type: 'uuid', transformer: ulidAsUuid('chn') })
  chainId!: string;

  @Column({ type: 'bigint', transformer: bigintAsNumber })
  position!: number;

  @Column({ name: 'event_id', type: 'uuid', transformer: ulidAsUuid('evt') })
  eventId!: string;

  /** The paths newly erased (`actor`, `resource`, `context.<m>`), sorted. */
  @Column({ type: 'text', array: true })
  fields!: string[];

  @Column({ name: 'erased_at', type: 'timestamptz', precision: 3 })
  erasedAt!: Date;

  /** The session's database role (session_user). */
  @Column({ name: 'database_role', type: 'text' })
  databaseRole!: string;
}
