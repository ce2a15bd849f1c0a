import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AUDIT_CHAIN } from '../audit-trail';
import { ErasureEntity } from '../entities/erasure.entity';
import { StoredErasure } from '../entities/event.entity';
import { joined, selectRows, Table } from '../schema/table';
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

/** What the service tells audit_erase_events of an erasure, for the record the function writes. */
export interface ErasureRequest {
  id: string;
  keyId: string;
  /** The field paths asked for, as given. */
  fields: readonly string[];
  reason: string;
  skipped: number;
}

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

  /**
   * Erases through audit_erase_events (the only way an event changes), which also writes the
   * erasure's record and, by its trigger, each changed event's (migration 1766000000000): the record.
   */
  async erase(
    accountId: string,
    rows: readonly EventErasure[],
    request: ErasureRequest,
    db: Db,
  ): Promise<ErasureRecord> {
    await db.query(`SELECT audit_erase_events($1, $2::jsonb, $3::jsonb)`, [
      ulidToUuid(accountId),
      JSON.stringify(rows.map((row) => ({ ...row, id: ulidToUuid(row.id) }))),
      JSON.stringify(request),
    ]);
    const [row] = await selectRows(db, RECORD, `SELECT ${RECORD.sql} FROM erasures r WHERE r.id = $1`, [request.id]);
    return row!;
  }

  /**
   * The account's `_audit` events whose context has one of the top-level `members` (where `_audit`
   * records a client's selections), with what an erasure needs of each.
   */
  async auditEntriesWith(accountId: string, members: readonly string[], db: Db): Promise<ErasureMatch[]> {
    return selectRows(
      db,
      MATCH,
      `SELECT ${MATCH.sql} FROM events e JOIN chains c ON ${chains.column('id')} = ${events.column('chainId')}
        WHERE ${events.column('accountId')} = $1 AND ${chains.column('name')} = $2 AND ${events.column('context')} ?| $3::text[]
        ORDER BY ${events.column('id')}`,
      [ulidToUuid(accountId), AUDIT_CHAIN, members],
    );
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
