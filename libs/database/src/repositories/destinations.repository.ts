import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Db } from '../transaction-runner';

export type DestinationState = 'active' | 'retrying' | 'paused' | 'disabled';

/** A live-tail stream position (apps/api/src/events/stream/stream-position.ts), as stored. */
export interface StoredStreamPosition {
  since: string;
  until: string | null;
  after: { time: string; chainId: string; position: number } | null;
}

export interface DestinationError {
  at: string;
  status: number | null;
  message: string;
}

/** A destination's row: its settings, sealed credentials and where its delivery stands. */
export interface DestinationRow {
  id: string;
  accountId: string;
  name: string;
  kind: string;
  url: string;
  format: string;
  q: string | null;
  batchSize: number;
  timeoutSeconds: number;
  options: Record<string, string>;
  secrets: Buffer;
  start: string;
  state: DestinationState;
  version: number;
  position: StoredStreamPosition;
  deliveredEvents: number;
  lastDeliveredAt: Date | null;
  lastDeliveredEventAt: Date | null;
  caughtUp: boolean;
  consecutiveFailures: number;
  failingSince: Date | null;
  lastError: DestinationError | null;
  createdAt: Date;
}

export type NewDestination = Pick<
  DestinationRow,
  | 'id'
  | 'accountId'
  | 'name'
  | 'kind'
  | 'url'
  | 'format'
  | 'q'
  | 'batchSize'
  | 'timeoutSeconds'
  | 'options'
  | 'secrets'
  | 'start'
  | 'position'
>;

/** What the API may change; every change also moves `version` on (a delivery begun before it stops). */
export type DestinationChange = Partial<
  Pick<
    DestinationRow,
    'name' | 'url' | 'format' | 'q' | 'batchSize' | 'timeoutSeconds' | 'options' | 'secrets' | 'state' | 'position'
  >
> & { clearFailures?: boolean };

/** What an acknowledged batch moves on. */
export interface Acknowledgement {
  position: StoredStreamPosition;
  events: number;
  lastEventAt: Date;
  caughtUp: boolean;
}

const COLUMNS = `d.id, d.account_id AS "accountId", d.name, d.kind, d.url, d.format, d.q,
  d.batch_size AS "batchSize", d.timeout_seconds AS "timeoutSeconds", d.options, d.secrets, d.start, d.state,
  d.version, d.position, d.delivered_events::float8 AS "deliveredEvents", d.last_delivered_at AS "lastDeliveredAt",
  d.last_delivered_event_at AS "lastDeliveredEventAt", d.caught_up AS "caughtUp",
  d.consecutive_failures AS "consecutiveFailures", d.failing_since AS "failingSince", d.last_error AS "lastError",
  d.created_at AS "createdAt"`;

/** Column of each changeable field. */
const CHANGEABLE: Record<Exclude<keyof DestinationChange, 'clearFailures'>, string> = {
  name: 'name',
  url: 'url',
  format: 'format',
  q: 'q',
  batchSize: 'batch_size',
  timeoutSeconds: 'timeout_seconds',
  options: 'options',
  secrets: 'secrets',
  state: 'state',
  position: 'position',
};

/**
 * Every query of the `destinations` table (docs/contract.md §16): the API's reads and changes, and the
 * delivery engine's leases, acknowledgements and failures. The engine's writes name the lease
 * owner and the version they deliver: an instance that lost its lease, or a delivery begun before
 * a change, writes nothing (and learns so from the answer).
 */
@Injectable()
export class DestinationsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  async insert(row: NewDestination, tx: Db): Promise<DestinationRow> {
    const [made] = (await tx.query(
      `INSERT INTO destinations AS d (id, account_id, name, kind, url, format, q, batch_size, timeout_seconds, options,
                                      secrets, start, state, position)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, 'active', $13)
       RETURNING ${COLUMNS}`,
      [
        row.id,
        row.accountId,
        row.name,
        row.kind,
        row.url,
        row.format,
        row.q,
        row.batchSize,
        row.timeoutSeconds,
        row.options,
        row.secrets,
        row.start,
        row.position,
      ],
    )) as DestinationRow[];
    return made!;
  }

  async countInAccount(accountId: string, db: Db = this.pool): Promise<number> {
    const [row] = (await db.query(`SELECT count(*)::int AS n FROM destinations WHERE account_id = $1`, [
      accountId,
    ])) as { n: number }[];
    return row!.n;
  }

  /** The account's destinations, oldest first, after the cursor's (created, id). */
  async listInAccount(
    accountId: string,
    limit: number,
    cursor?: { time: string; id: string },
    db: Db = this.pool,
  ): Promise<DestinationRow[]> {
    return (await db.query(
      `SELECT ${COLUMNS} FROM destinations d
        WHERE d.account_id = $1 AND ($2::timestamptz IS NULL OR (d.created_at, d.id) > ($2::timestamptz, $3::varchar))
        ORDER BY d.created_at, d.id LIMIT $4`,
      [accountId, cursor?.time ?? null, cursor?.id ?? null, limit],
    )) as DestinationRow[];
  }

  /** The destination `id` of the account, or null; `lock`: its row locked until the transaction ends. */
  async findInAccount(accountId: string, id: string, db: Db = this.pool, lock = false): Promise<DestinationRow | null> {
    const [row] = (await db.query(
      `SELECT ${COLUMNS} FROM destinations d WHERE d.account_id = $1 AND d.id = $2 ${lock ? 'FOR UPDATE' : ''}`,
      [accountId, id],
    )) as DestinationRow[];
    return row ?? null;
  }

  /** The destination as the delivery engine reads it, or null once deleted. */
  async findForDelivery(id: string, db: Db = this.pool): Promise<DestinationRow | null> {
    const [row] = (await db.query(`SELECT ${COLUMNS} FROM destinations d WHERE d.id = $1`, [id])) as DestinationRow[];
    return row ?? null;
  }

  /** Applies an API change and moves `version` on; `clearFailures` also forgets the failure streak. */
  async change(id: string, change: DestinationChange, tx: Db): Promise<DestinationRow> {
    const params: unknown[] = [id];
    const sets = ['version = d.version + 1'];
    for (const [field, column] of Object.entries(CHANGEABLE)) {
      const value = change[field as keyof typeof CHANGEABLE];
      if (value !== undefined) sets.push(`${column} = $${params.push(value)}`);
    }
    if (change.clearFailures) sets.push('consecutive_failures = 0', 'failing_since = NULL');
    if (change.position !== undefined) sets.push('caught_up = false');
    const [row] = await returning<DestinationRow>(
      tx,
      `UPDATE destinations d SET ${sets.join(', ')} WHERE d.id = $1 RETURNING ${COLUMNS}`,
      params,
    );
    return row!;
  }

  async delete(id: string, tx: Db): Promise<void> {
    await tx.query(`DELETE FROM destinations WHERE id = $1`, [id]);
  }

  /** Every destination of an account, whatever its state (a disabled one may be resumed: a prune may leave a gap in any). */
  async everyInAccount(accountId: string, db: Db = this.pool): Promise<DestinationRow[]> {
    return (await db.query(`SELECT ${COLUMNS} FROM destinations d WHERE d.account_id = $1 ORDER BY d.id`, [
      accountId,
    ])) as DestinationRow[];
  }

  /**
   * Renews `owner`'s leases and takes those of deliverable destinations nobody holds (never held, or
   * run out): the ids and versions it holds now. Its own rows are waited for (its worker may be
   * writing one: skipping it would look like a lost lease); free rows another instance is taking are
   * skipped, not waited for.
   */
  async claim(owner: string, leaseSeconds: number, db: Db = this.pool): Promise<{ id: string; version: number }[]> {
    return (await db.query(
      `WITH own AS (
         UPDATE destinations SET lease_until = now() + make_interval(secs => $2)
          WHERE lease_owner = $1 AND state IN ('active', 'retrying')
          RETURNING id, version),
       free AS (
         UPDATE destinations d SET lease_owner = $1, lease_until = now() + make_interval(secs => $2)
          WHERE d.id IN (SELECT id FROM destinations
                          WHERE state IN ('active', 'retrying') AND lease_owner IS DISTINCT FROM $1
                            AND (lease_until IS NULL OR lease_until < now())
                          FOR UPDATE SKIP LOCKED)
          RETURNING d.id, d.version)
       SELECT id, version FROM own UNION ALL SELECT id, version FROM free`,
      [owner, leaseSeconds],
    )) as { id: string; version: number }[];
  }

  /** Gives up `owner`'s leases (a stop): another instance takes them at its next claim. */
  async release(owner: string, db: Db = this.pool): Promise<void> {
    await db.query(`UPDATE destinations SET lease_owner = NULL, lease_until = NULL WHERE lease_owner = $1`, [owner]);
  }

  /** Stores an acknowledged batch; false when `owner` no longer delivers this version (stop delivering). */
  async acknowledged(
    id: string,
    owner: string,
    version: number,
    ack: Acknowledgement,
    db: Db = this.pool,
  ): Promise<boolean> {
    const rows = await returning(
      db,
      `UPDATE destinations SET position = $4, delivered_events = delivered_events + $5, last_delivered_at = now(),
              last_delivered_event_at = $6, caught_up = $7, consecutive_failures = 0, failing_since = NULL,
              state = 'active'
        WHERE id = $1 AND lease_owner = $2 AND version = $3
        RETURNING id`,
      [id, owner, version, ack.position, ack.events, ack.lastEventAt, ack.caughtUp],
    );
    return rows.length === 1;
  }

  /** Records that the last read found nothing more to deliver (once, not at every poll). */
  async caughtUp(id: string, owner: string, version: number, db: Db = this.pool): Promise<boolean> {
    const rows = await returning(
      db,
      `UPDATE destinations SET caught_up = true WHERE id = $1 AND lease_owner = $2 AND version = $3 RETURNING id`,
      [id, owner, version],
    );
    return rows.length === 1;
  }

  /**
   * Records a failed attempt and returns the state it leaves: `disabled` (410) or `paused` (a refusal
   * that must not be retried, or failures for `pauseAfterHours`) end delivery; null when `owner` no
   * longer delivers this version.
   */
  async failed(
    id: string,
    owner: string,
    version: number,
    error: DestinationError,
    outcome: 'retry' | 'pause' | 'disable',
    pauseAfterHours: number,
    tx: Db,
  ): Promise<{ state: DestinationState; failingSince: Date } | null> {
    const [row] = await returning<{ state: DestinationState; failingSince: Date }>(
      tx,
      `UPDATE destinations
          SET consecutive_failures = consecutive_failures + 1, failing_since = coalesce(failing_since, now()),
              last_error = $4,
              state = CASE WHEN $5 = 'disable' THEN 'disabled'
                           WHEN $5 = 'pause' OR coalesce(failing_since, now()) <= now() - make_interval(hours => $6)
                             THEN 'paused'
                           ELSE 'retrying' END
        WHERE id = $1 AND lease_owner = $2 AND version = $3
        RETURNING state, failing_since AS "failingSince"`,
      [id, owner, version, error, outcome, pauseAfterHours],
    );
    return row ?? null;
  }

  /** How many destinations are in each state (the `audit_stream_destinations` gauge). */
  async countByState(db: Db = this.pool): Promise<Record<DestinationState, number>> {
    const rows = (await db.query(`SELECT state, count(*)::int AS n FROM destinations GROUP BY state`)) as {
      state: DestinationState;
      n: number;
    }[];
    const counts: Record<DestinationState, number> = { active: 0, retrying: 0, paused: 0, disabled: 0 };
    for (const { state, n } of rows) counts[state] = n;
    return counts;
  }
}

/** The rows an `UPDATE … RETURNING` returned: TypeORM's PostgreSQL driver answers an UPDATE with [rows, affected count]. */
async function returning<T = unknown>(db: Db, sql: string, params: unknown[]): Promise<T[]> {
  const [rows] = (await db.query(sql, params)) as [T[], number];
  return rows;
}
