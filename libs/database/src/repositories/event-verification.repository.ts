import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { asString, computed, joined, selectRows } from '../schema/table';
import { Db } from '../transaction-runner';
import { events } from './event-record';
import { isoTimestamp, recordedErasuresSql, VerifiedEventRow } from './verification-window.queries';

/** The event's time as it was hashed: written by the database exactly as the API writes it. */
const HASHED_TIME = computed({ timestamp: [isoTimestamp(events.column('timestamp')), asString] });

/** An event as verification reads it: its hash payload and stored hash (VerifiedEventRow). */
const VERIFIED_EVENT = joined(
  events.select(
    'id',
    'chainId',
    'position',
    'actor',
    'action',
    'resource',
    'context',
    'previousHash',
    'hash',
    'saltSeed',
    'erasure',
  ),
  HASHED_TIME,
);

/** The link to an event's predecessor: its hash and time. */
const LINK = joined(events.select('hash'), HASHED_TIME);

/** GET /v1/events/:id/verify: one event and its predecessor's link, as hashed. */
@Injectable()
export class EventVerificationRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** One event of the account, as verification reads it; null for an unknown id or another account's. */
  async findForVerification(accountId: string, id: string, db: Db = this.pool): Promise<VerifiedEventRow | null> {
    const [row] = await selectRows(
      db,
      VERIFIED_EVENT,
      `SELECT ${VERIFIED_EVENT.sql} FROM events e WHERE ${events.column('id')} = $1 AND ${events.column('accountId')} = $2`,
      [ulidToUuid(id), ulidToUuid(accountId)],
    );
    return row ?? null;
  }

  /**
   * The erased field paths the database recorded for the event (erasure_events), or null when the
   * event keeps no erasure (docs/contract.md §17).
   */
  async recordedErasures(accountId: string, id: string, db: Db = this.pool): Promise<string[] | null> {
    const [row] = await db.query<{ recorded: string[] | null }[]>(
      `SELECT ${recordedErasuresSql('events')} AS recorded FROM events WHERE id = $1 AND account_id = $2`,
      [ulidToUuid(id), ulidToUuid(accountId)],
    );
    return row?.recorded ?? null;
  }

  /** The hash and timestamp of the account's event at `position` of the chain; null when there is none. */
  async findLinkFacts(
    accountId: string,
    chainId: string,
    position: number,
    db: Db = this.pool,
  ): Promise<{ hash: string; timestamp: string } | null> {
    const [row] = await selectRows(
      db,
      LINK,
      `SELECT ${LINK.sql} FROM events e
        WHERE ${events.column('accountId')} = $1 AND ${events.column('chainId')} = $2 AND ${events.column('position')} = $3`,
      [ulidToUuid(accountId), ulidToUuid(chainId), position],
    );
    return row ?? null;
  }
}
