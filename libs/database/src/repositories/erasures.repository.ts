import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ErasureEntity } from '../entities/erasure.entity';
import { StoredErasure } from '../entities/event.entity';
import { joined, Property, selectRows, Table } from '../schema/table';
import { Db } from '../transaction-runner';
import { lockLegalHolds } from './legal-hold-lock';
import { EventFilters, matching } from './event-filters.sql';
import { chains, EVENT_RECORD, events } from './event-record';

const erasures = new Table(ErasureEntity, 'r');

/** What an erasure reads of each matching event: the whole stored event (its secrets too), its chain's version and hold. */
const MATCH = joined(EVENT_RECORD, chains.selectAs({ hashVersion: 'hashVersion', chainHeld: 'legalHold' }));
export type ErasureMatch = ReturnType<typeof MATCH.decode>;

const RECORD = erasures.select('id', 'accountId', 'at', 'keyId', 'events', 'skipped', 'fields', 'reason');
export type ErasureRecord = ReturnType<typeof RECORD.decode>;

/** One event's erasure as audit_erase_events takes it (migration 1765600000000; the id as uuid since 1765900000000). */
export interface EventErasure {
  id: string;
  /** The actor and the resource: erased (null) or kept. */
  actor: boolean;
  resource: boolean;
  /** The context left: the members kept, unchanged; null when it was null. */
  context: Record<string, unknown> | null;
  erasure: StoredErasure;
}

/** The columns an erasure's record is inserted with (its time is the database's). */
const INSERTED = [
  'id',
  'accountId',
  'keyId',
  'events',
  'skipped',
  'fields',
  'reason',
] as const satisfies readonly Property<ErasureEntity>[];

/** Erasures (docs/contract.md §17): the events a query matches, the database's erasure function, the record. */
@Injectable()
export class ErasuresRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** Waits for the account's legal hold changes in flight, and holds new ones until this transaction ends. */
  lockLegalHolds(accountId: string, db: Db): Promise<void> {
    return lockLegalHolds(accountId, db);
  }

  /** The account's events that `filters` match, at most `limit`, with what an erasure needs of each. */
  async matches(accountId: string, filters: EventFilters, limit: number, db: Db = this.pool): Promise<ErasureMatch[]> {
    const from = matching(accountId, filters);
    return selectRows(
      db,
      MATCH,
      `SELECT ${MATCH.sql} ${from.text} ORDER BY ${events.column('id')} LIMIT ${limit}`,
      from.params,
    );
  }

  /** Erases through audit_erase_events (the only way an event changes); the number of events changed. */
  async erase(accountId: string, rows: readonly EventErasure[], db: Db): Promise<number> {
    const [result] = await db.query<{ n: number }[]>(`SELECT audit_erase_events($1, $2::jsonb) AS n`, [
      ulidToUuid(accountId),
      JSON.stringify(rows.map((row) => ({ ...row, id: ulidToUuid(row.id) }))),
    ]);
    return result?.n ?? 0;
  }

  async record(erasure: Omit<ErasureRecord, 'at'>, db: Db): Promise<ErasureRecord> {
    const [row] = await selectRows(
      db,
      RECORD,
      `WITH r AS (INSERT INTO erasures (${INSERTED.map((p) => erasures.bare(p)).join(', ')})
         VALUES (${INSERTED.map((_, i) => `$${i + 1}`).join(', ')}) RETURNING *)
       SELECT ${RECORD.sql} FROM r`,
      INSERTED.map((p: (typeof INSERTED)[number]) => (p === 'accountId' ? ulidToUuid(erasure.accountId) : erasure[p])),
    );
    return row!;
  }

  /** The account's erasures, newest first, after `cursor`. */
  async list(
    accountId: string,
    limit: number,
    cursor?: { time: string; id: string },
    db: Db = this.pool,
  ): Promise<ErasureRecord[]> {
    const at = erasures.column('at');
    return selectRows(
      db,
      RECORD,
      `SELECT ${RECORD.sql} FROM erasures r
        WHERE ${erasures.column('accountId')} = $1
          AND ($2::timestamptz IS NULL OR (${at}, r.id) < ($2::timestamptz, $3::varchar))
        ORDER BY ${at} DESC, r.id DESC LIMIT $4`,
      [ulidToUuid(accountId), cursor?.time ?? null, cursor?.id ?? null, limit],
    );
  }
}
