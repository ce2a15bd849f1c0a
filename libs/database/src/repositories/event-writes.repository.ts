import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { EventEntity } from '../entities/event.entity';
import { Property } from '../schema/table';
import { Db } from '../transaction-runner';
import { EventRecord, events } from './event-record';

/** The columns an append writes, each with the array type its `unnest` parameter has and its value of a record. */
const INSERTED: readonly [Property<EventEntity>, string, (event: EventRecord) => unknown][] = [
  ['id', 'uuid', (e) => ulidToUuid(e.id)],
  ['accountId', 'uuid', (e) => ulidToUuid(e.accountId)],
  ['chainId', 'uuid', (e) => ulidToUuid(e.chainId)],
  ['position', 'int8', (e) => e.position],
  ['actor', 'text', (e) => e.actor],
  ['action', 'text', (e) => e.action],
  ['resource', 'text', (e) => e.resource],
  // As text, cast to jsonb in the SELECT.
  ['context', 'text', (e) => (e.context === null ? null : JSON.stringify(e.context))],
  ['timestamp', 'timestamptz', (e) => e.timestamp.toISOString()],
  // As hex text, decoded to the stored 32 bytes in the SELECT.
  ['previousHash', 'text', (e) => e.previousHash],
  ['hash', 'text', (e) => e.hash],
  // Version-2 events (null on version 1): as hex text, decoded in the SELECT. `erasure` starts null.
  ['saltSeed', 'text', (e) => e.saltSeed],
  // The action schema version that checked it, and whether it held (docs/contract.md §19); null without one.
  ['schemaId', 'int4', (e) => e.schema?.id ?? null],
  ['schemaValid', 'bool', (e) => e.schema?.valid ?? null],
];

/** An unnested column as the table stores it: context as jsonb, the hashes as their bytes. */
function selected(property: Property<EventEntity>): string {
  const column = events.bare(property);
  if (property === 'context') return `${column}::jsonb`;
  if (property === 'hash' || property === 'previousHash' || property === 'saltSeed') return `decode(${column}, 'hex')`;
  return column;
}

const COLUMNS = INSERTED.map(([property]) => events.bare(property)).join(', ');

/**
 * All `events` in one statement (`INSERT … SELECT FROM unnest`), one array parameter per column:
 * one round trip per batch, whatever its size. The unnested columns take the table's column names.
 */
const INSERT_EVENTS = `INSERT INTO events (${COLUMNS})
  SELECT ${INSERTED.map(([property]) => selected(property)).join(', ')}
    FROM unnest(${INSERTED.map(([, type], i) => `$${i + 1}::${type}[]`).join(', ')}) AS e(${COLUMNS})`;

/** What writes events: only appends (rows are never updated; a retention prune deletes in `audit_prune_chain`). */
@Injectable()
export class EventWritesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  /** All `events` in one statement (`INSERT … SELECT FROM unnest`): one round trip per batch. */
  async insertMany(records: readonly EventRecord[], db: Db = this.dataSource.manager): Promise<void> {
    await db.query(
      INSERT_EVENTS,
      INSERTED.map(([, , value]) => records.map(value)),
    );
  }
}
