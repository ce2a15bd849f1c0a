import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import {
  DestinationEntity,
  DestinationError,
  DestinationState,
  StoredStreamPosition,
} from '../entities/destination.entity';
import { asBoolean, asDate, asNumber, computed, joined, Property, selectRows, Table } from '../schema/table';
import { Db } from '../transaction-runner';

const destinations = new Table(DestinationEntity, 'd');
const column = (property: Property<DestinationEntity>): string => destinations.column(property);
const bare = (property: Property<DestinationEntity>): string => destinations.bare(property);

/** What the API sets at creation and may change later (`kind` only at creation). */
const SETTINGS = ['name', 'url', 'format', 'q', 'batchSize', 'timeoutSeconds', 'options', 'secrets'] as const;

/** A destination's row: its settings, sealed credentials and where its delivery stands (not its lease). */
const DESTINATION = destinations.select(
  'id',
  'accountId',
  'kind',
  ...SETTINGS,
  'start',
  'state',
  'version',
  'position',
  'deliveredEvents',
  'lastDeliveredAt',
  'lastDeliveredEventAt',
  'caughtUp',
  'consecutiveFailures',
  'failingSince',
  'lastError',
  'createdAt',
);
export type DestinationRow = ReturnType<typeof DESTINATION.decode>;

const COLUMNS = DESTINATION.sql;

/** What the API sets at creation. */
const CREATED = ['id', 'accountId', 'kind', ...SETTINGS, 'start', 'position'] as const;
export type NewDestination = Pick<DestinationRow, (typeof CREATED)[number]>;

/** What the API may change; every change also moves `version` on (a delivery begun before it stops). */
const CHANGEABLE = [...SETTINGS, 'state', 'position'] as const;
export type DestinationChange = Partial<Pick<DestinationRow, (typeof CHANGEABLE)[number]>> & {
  /** STREAM_PAUSE_AFTER_HOURS counts again from the next failure (a resume); the backoff is kept. */
  restartFailingSince?: boolean;
};

/** What a destination accepts at most once a minute (docs/contract.md §16 "Failures"). */
export type LimitedAction = 'replay' | 'resume';
const LIMITED: Record<LimitedAction, Property<DestinationEntity>> = { replay: 'replayedAt', resume: 'resumedAt' };

/** What an acknowledged batch moves on. */
export interface Acknowledgement {
  position: StoredStreamPosition;
  events: number;
  lastEventAt: Date;
  caughtUp: boolean;
}

const ID = destinations.select('id');

/** A destination with what is left of its backoff, in milliseconds (0 when none: greatest() skips a null). */
const FOR_DELIVERY = joined(
  DESTINATION,
  computed({
    backoffMs: [`greatest(0, ceil(extract(epoch FROM ${column('retryAt')} - now()) * 1000))::float8`, asNumber],
  }),
);

/** The lease owner's and version's guard of the delivery engine's writes ($1 id, $2 owner, $3 version). */
const DELIVERING = `d.id = $1 AND ${column('leaseOwner')} = $2 AND ${column('version')} = $3`;

/** Deliverable: what a lease is held or taken for. */
const DELIVERABLE = `IN ('active', 'retrying')`;

/**
 * Every query of the `destinations` table (docs/contract.md §16): the API's reads and changes, and the
 * delivery engine's leases, acknowledgements and failures. The engine's writes name the lease
 * owner and the version they deliver: an instance that lost its lease, or a delivery begun before
 * a change, writes nothing (and learns so from the answer). An UPDATE's rows are read through a CTE
 * named as the table's alias (`WITH d AS (UPDATE destinations d … RETURNING …) SELECT … FROM d`):
 * TypeORM answers an UPDATE itself with [rows, count].
 */
@Injectable()
export class DestinationsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  async insert(row: NewDestination, tx: Db): Promise<DestinationRow> {
    const [made] = await selectRows(
      tx,
      DESTINATION,
      `INSERT INTO destinations AS d (${CREATED.map(bare).join(', ')}, ${bare('state')})
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, 'active')
       RETURNING ${COLUMNS}`,
      CREATED.map((property) => (property === 'accountId' ? ulidToUuid(row.accountId) : row[property])),
    );
    return made!;
  }

  async countInAccount(accountId: string, db: Db = this.pool): Promise<number> {
    const count = computed({ n: ['count(*)::int', asNumber] });
    const [row] = await selectRows(
      db,
      count,
      `SELECT ${count.sql} FROM destinations d WHERE ${column('accountId')} = $1`,
      [ulidToUuid(accountId)],
    );
    return row!.n;
  }

  /** The account's destinations, oldest first, after the cursor's (created, id). */
  async listInAccount(
    accountId: string,
    limit: number,
    cursor?: { time: string; id: string },
    db: Db = this.pool,
  ): Promise<DestinationRow[]> {
    const created = column('createdAt');
    return selectRows(
      db,
      DESTINATION,
      `SELECT ${COLUMNS} FROM destinations d
        WHERE ${column('accountId')} = $1
          AND ($2::timestamptz IS NULL OR (${created}, d.id) > ($2::timestamptz, $3::varchar))
        ORDER BY ${created}, d.id LIMIT $4`,
      [ulidToUuid(accountId), cursor?.time ?? null, cursor?.id ?? null, limit],
    );
  }

  /** The destination `id` of the account, or null; `lock`: its row locked until the transaction ends. */
  async findInAccount(accountId: string, id: string, db: Db = this.pool, lock = false): Promise<DestinationRow | null> {
    const [row] = await selectRows(
      db,
      DESTINATION,
      `SELECT ${COLUMNS} FROM destinations d WHERE ${column('accountId')} = $1 AND d.id = $2 ${lock ? 'FOR UPDATE' : ''}`,
      [ulidToUuid(accountId), id],
    );
    return row ?? null;
  }

  /**
   * The destination as the delivery engine reads it, or null once deleted; `backoffMs`: what is left
   * of its backoff (0: none), by the database's clock, which set `retryAt`.
   */
  async findForDelivery(id: string, db: Db = this.pool): Promise<(DestinationRow & { backoffMs: number }) | null> {
    const [row] = await selectRows(db, FOR_DELIVERY, `SELECT ${FOR_DELIVERY.sql} FROM destinations d WHERE d.id = $1`, [
      id,
    ]);
    return row ?? null;
  }

  /**
   * Applies an API change and moves `version` on. The backoff (`retryAt`, `consecutiveFailures`) is
   * never part of a change: only the delivery engine's attempts move it (docs/contract.md §16).
   */
  async change(id: string, change: DestinationChange, tx: Db): Promise<DestinationRow> {
    const params: unknown[] = [id];
    const sets = [`${bare('version')} = ${column('version')} + 1`];
    for (const field of CHANGEABLE) {
      const value = change[field];
      if (value !== undefined) sets.push(`${bare(field)} = $${params.push(value)}`);
    }
    if (change.restartFailingSince) sets.push(`${bare('failingSince')} = NULL`);
    if (change.position !== undefined) sets.push(`${bare('caughtUp')} = false`);
    const [row] = await selectRows(
      tx,
      DESTINATION,
      `WITH d AS (UPDATE destinations d SET ${sets.join(', ')} WHERE d.id = $1 RETURNING d.*) SELECT ${COLUMNS} FROM d`,
      params,
    );
    return row!;
  }

  /**
   * Takes the destination's allowance of `action` (its row locked by the caller's transaction): 0
   * when taken (its time stored), else the whole seconds until the last one is `perSeconds` old. The
   * database's clock decides, so the limit holds across instances.
   */
  async takeAllowance(id: string, action: LimitedAction, perSeconds: number, tx: Db): Promise<number> {
    const [at, stamp] = [column(LIMITED[action]), bare(LIMITED[action])];
    const wait = computed({ wait: ['w.wait', asNumber] });
    const [row] = await selectRows(
      tx,
      wait,
      `WITH d AS (SELECT d.id, ${at} FROM destinations d WHERE d.id = $1),
            taken AS (UPDATE destinations SET ${stamp} = now()
                       WHERE id = $1 AND (${stamp} IS NULL OR ${stamp} <= now() - make_interval(secs => $2))
                       RETURNING id),
            w AS (SELECT CASE WHEN EXISTS (SELECT 1 FROM taken) THEN 0
                              ELSE greatest(1, ceil(extract(epoch FROM ${at} + make_interval(secs => $2) - now())))
                         END AS wait FROM d)
       SELECT ${wait.sql} FROM w`,
      [id, perSeconds],
    );
    return row?.wait ?? 0;
  }

  async delete(id: string, tx: Db): Promise<void> {
    await tx.query(`DELETE FROM destinations WHERE id = $1`, [id]);
  }

  /** Every destination of an account, whatever its state (a disabled one may be resumed: a prune may leave a gap in any). */
  async everyInAccount(accountId: string, db: Db = this.pool): Promise<DestinationRow[]> {
    return selectRows(
      db,
      DESTINATION,
      `SELECT ${COLUMNS} FROM destinations d WHERE ${column('accountId')} = $1 ORDER BY d.id`,
      [ulidToUuid(accountId)],
    );
  }

  /**
   * Renews `owner`'s leases and takes those of deliverable destinations nobody holds (never held, or
   * run out): the ids and versions it holds now. Its own rows are waited for (its worker may be
   * writing one: skipping it would look like a lost lease); free rows another instance is taking are
   * skipped, not waited for.
   */
  async claim(owner: string, leaseSeconds: number, db: Db = this.pool): Promise<{ id: string; version: number }[]> {
    const held = destinations.select('id', 'version');
    const [leaseOwner, leaseUntil, state] = [bare('leaseOwner'), bare('leaseUntil'), bare('state')];
    return selectRows(
      db,
      held,
      `WITH own AS (
         UPDATE destinations d SET ${leaseUntil} = now() + make_interval(secs => $2)
          WHERE ${column('leaseOwner')} = $1 AND ${column('state')} ${DELIVERABLE}
          RETURNING d.id, ${column('version')}),
       free AS (
         UPDATE destinations d SET ${leaseOwner} = $1, ${leaseUntil} = now() + make_interval(secs => $2)
          WHERE d.id IN (SELECT id FROM destinations
                          WHERE ${state} ${DELIVERABLE} AND ${leaseOwner} IS DISTINCT FROM $1
                            AND (${leaseUntil} IS NULL OR ${leaseUntil} < now())
                          FOR UPDATE SKIP LOCKED)
          RETURNING d.id, ${column('version')})
       SELECT ${held.sql} FROM own d UNION ALL SELECT ${held.sql} FROM free d`,
      [owner, leaseSeconds],
    );
  }

  /** Gives up `owner`'s leases (a stop): another instance takes them at its next claim. */
  async release(owner: string, db: Db = this.pool): Promise<void> {
    const [leaseOwner, leaseUntil] = [bare('leaseOwner'), bare('leaseUntil')];
    await db.query(`UPDATE destinations SET ${leaseOwner} = NULL, ${leaseUntil} = NULL WHERE ${leaseOwner} = $1`, [
      owner,
    ]);
  }

  /** Stores an acknowledged batch; false when `owner` no longer delivers this version (stop delivering). */
  async acknowledged(
    id: string,
    owner: string,
    version: number,
    ack: Acknowledgement,
    db: Db = this.pool,
  ): Promise<boolean> {
    const delivered = bare('deliveredEvents');
    const rows = await selectRows(
      db,
      ID,
      `WITH d AS (
         UPDATE destinations d
            SET ${bare('position')} = $4, ${delivered} = ${column('deliveredEvents')} + $5,
                ${bare('lastDeliveredAt')} = now(), ${bare('lastDeliveredEventAt')} = $6, ${bare('caughtUp')} = $7,
                ${bare('consecutiveFailures')} = 0, ${bare('failingSince')} = NULL, ${bare('retryAt')} = NULL,
                ${bare('state')} = 'active'
          WHERE ${DELIVERING}
          RETURNING d.id)
       SELECT ${ID.sql} FROM d`,
      [id, owner, version, ack.position, ack.events, ack.lastEventAt, ack.caughtUp],
    );
    return rows.length === 1;
  }

  /** Records that the last read found nothing more to deliver (once, not at every poll). */
  async caughtUp(id: string, owner: string, version: number, db: Db = this.pool): Promise<boolean> {
    const rows = await selectRows(
      db,
      ID,
      `WITH d AS (UPDATE destinations d SET ${bare('caughtUp')} = true WHERE ${DELIVERING} RETURNING d.id)
       SELECT ${ID.sql} FROM d`,
      [id, owner, version],
    );
    return rows.length === 1;
  }

  /**
   * Records a failed attempt, and its backoff (no attempt for `retryInMs`), and returns the state it
   * leaves: `disabled` (410) or `paused` (a refusal that must not be retried, or failures for
   * `pauseAfterHours`) end delivery. An attempt of a version a change has moved past (it ran while
   * the change was made) is still counted, with its backoff, as long as `owner` holds the lease, but
   * changes no state: null then, as when `owner` no longer holds the lease.
   */
  async failed(
    id: string,
    owner: string,
    version: number,
    error: DestinationError,
    outcome: { action: 'retry' | 'pause' | 'disable'; retryInMs: number },
    pauseAfterHours: number,
    tx: Db,
  ): Promise<{ state: DestinationState; failingSince: Date } | null> {
    // failing_since is set by this very statement: never null after it.
    const after = joined(
      destinations.select('state'),
      computed({ failingSince: [column('failingSince'), asDate], current: ['d.current', asBoolean] }),
    );
    const [failingSince, current] = [column('failingSince'), `${column('version')} = $3`];
    const [row] = await selectRows(
      tx,
      after,
      `WITH d AS (
         UPDATE destinations d
            SET ${bare('consecutiveFailures')} = ${column('consecutiveFailures')} + 1,
                ${bare('failingSince')} = coalesce(${failingSince}, now()), ${bare('lastError')} = $4,
                ${bare('retryAt')} = now() + make_interval(secs => $7::float8 / 1000),
                ${bare('state')} = CASE WHEN NOT (${current}) THEN ${column('state')}
                                        WHEN $5 = 'disable' THEN 'disabled'
                                        WHEN $5 = 'pause' OR coalesce(${failingSince}, now()) <= now() - make_interval(hours => $6)
                                          THEN 'paused'
                                        ELSE 'retrying' END
          WHERE d.id = $1 AND ${column('leaseOwner')} = $2
          RETURNING ${column('state')}, ${failingSince}, ${current} AS current)
       SELECT ${after.sql} FROM d`,
      [id, owner, version, error, outcome.action, pauseAfterHours, outcome.retryInMs],
    );
    return row?.current ? { state: row.state, failingSince: row.failingSince } : null;
  }

  /** How many destinations are in each state (the `audit_stream_destinations` gauge). */
  async countByState(db: Db = this.pool): Promise<Record<DestinationState, number>> {
    const perState = joined(destinations.select('state'), computed({ n: ['count(*)::int', asNumber] }));
    const rows = await selectRows(
      db,
      perState,
      `SELECT ${perState.sql} FROM destinations d GROUP BY ${column('state')}`,
    );
    const counts: Record<DestinationState, number> = { active: 0, retrying: 0, paused: 0, disabled: 0 };
    for (const { state, n } of rows) counts[state] = n;
    return counts;
  }
}
