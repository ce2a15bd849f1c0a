import { Check, Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintAsNumber } from './bigint-number.transformer';
import { ulidAsUuid } from './ulid-uuid.transformer';

/**
 * How many events of one (account, chain, action) fall in one UTC day: the rollup statistics
 * read (docs/contract.md §13). Written only by the triggers on `events` (migration 1764900000000), in the
 * same statement as the events it counts; a row that would count 0 is removed. No foreign keys:
 * every row comes from events, which have them.
 */
@Entity({ name: 'event_counts' })
@Check('ck_event_counts_count', 'count > 0')
export class EventCountEntity {
  @PrimaryColumn({
    name: 'account_id',
    type: 'uuid',
    transformer: ulidAsUuid('acc'),
    primaryKeyConstraintName: 'pk_event_counts',
  })
  accountId!: string;

  /** The UTC day, as PostgreSQL prints a date (YYYY-MM-DD). */
  @PrimaryColumn({ type: 'date', primaryKeyConstraintName: 'pk_event_counts' })
  day!: string;

  @PrimaryColumn({
    name: 'chain_id',
    type: 'uuid',
    transformer: ulidAsUuid('chn'),
    primaryKeyConstraintName: 'pk_event_counts',
  })
  chainId!: string;

  @PrimaryColumn({ type: 'text', primaryKeyConstraintName: 'pk_event_counts' })
  action!: string;

  @Column({ type: 'bigint', transformer: bigintAsNumber })
  count!: number;
}
