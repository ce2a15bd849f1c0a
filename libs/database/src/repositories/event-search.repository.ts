import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { selectRows } from '../schema/table';
import { Db } from '../transaction-runner';
import { EventFilters, matching } from './event-filters.sql';
import { chains, EVENT_RECORD, EventRecord, events } from './event-record';

/** A row's place in (timestamp, id) order: what a page cursor holds. */
export interface EventKey {
  time: string;
  id: string;
}

/** GET /v1/events and GET /v1/events/:id: an account's events by id, and its pages with the spec's filters and `q`. */
@Injectable()
export class EventSearchRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** Newest first by (timestamp, id), strictly after `cursor` in that order; at most `limit` rows. */
  async list(
    accountId: string,
    filters: EventFilters,
    limit: number,
    cursor?: EventKey,
    db: Db = this.pool,
  ): Promise<EventRecord[]> {
    const from = matching(accountId, filters);
    const [timestamp, id] = [events.column('timestamp'), events.column('id')];
    if (cursor) {
      from.params.push(cursor.time, ulidToUuid(cursor.id));
      const n = from.params.length;
      from.text += ` AND (${timestamp}, ${id}) < ($${n - 1}::timestamptz, $${n})`;
    }
    from.params.push(limit);
    return selectRows(
      db,
      EVENT_RECORD,
      `SELECT ${EVENT_RECORD.sql} ${from.text} ORDER BY ${timestamp} DESC, ${id} DESC LIMIT $${from.params.length}`,
      from.params,
    );
  }

  /** One event of this account, or null (also for another account's event). */
  async findOwned(accountId: string, id: string, db: Db = this.pool): Promise<EventRecord | null> {
    const [row] = await selectRows(
      db,
      EVENT_RECORD,
      `SELECT ${EVENT_RECORD.sql} FROM events e JOIN chains c ON ${chains.column('id')} = ${events.column('chainId')}
        WHERE ${events.column('id')} = $1 AND ${events.column('accountId')} = $2`,
      [ulidToUuid(id), ulidToUuid(accountId)],
    );
    return row ?? null;
  }
}
