import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { AppConfig, Metrics } from '@app/common';
import { dataSourceOptions } from './data-source-options';
import { asBoolean, asString, computed, joined, selectRows } from './schema/table';
import { replicaTrouble } from './replica-trouble';
import { Db, TransactionRunner } from './transaction-runner';

/** How often the replica's lag is measured. */
const MEASURE_EVERY_MS = 250;
/** A replica that could not be reached is tried again this long after. */
const RECONNECT_AFTER_MS = 5000;
/** The primary's WAL positions remembered, at most (a minute of measurements). */
const MAX_SAMPLES = 240;

/** The primary's WAL position now; on a replica, the position it has replayed (on a primary, there is none: it is current). */
const PRIMARY_LSN = computed({ lsn: ['pg_current_wal_lsn()::text', asString] });
const REPLAYED_LSN = computed({ lsn: ['COALESCE(pg_last_wal_replay_lsn(), pg_current_wal_lsn())::text', asString] });

/**
 * Which cluster and database a server is, and whether it is a standby: a replica serves reads only
 * when it is in recovery, of the primary's cluster (its system identifier, kept by every physical
 * standby) and of the primary's database. Any other server (another database of the same server,
 * another cluster, a copy restored from a backup) would pass the floor check, its WAL position
 * being its own, and serve what the primary never had or no longer has (erased values included).
 */
const IDENTITY = computed({
  system: ['(SELECT system_identifier FROM pg_control_system())::text', asString],
  database: ['current_database()::text', asString],
  standby: ['pg_is_in_recovery()', asBoolean],
});
/** A replica's replay position and identity, read in one statement at each measurement. */
const REPLICA_STATE = joined(REPLAYED_LSN, IDENTITY);

/** `X/Y` (pg_lsn as text) as one number. */
function lsnOf(text: string): bigint {
  const [high = '0', low = '0'] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/** A replica's read that found it behind the primary's position at the read's start (it is tried again, or left to the primary). */
export class ReplicaBehind extends Error {
  constructor() {
    super("the replica has not replayed up to the primary's position at the start of the read");
  }
}

/**
 * The first statement of a read on the replica (in its transaction, so that everything the read
 * sees was replayed at least this far): throws ReplicaBehind while the replica has not replayed up
 * to `floor`, the primary's WAL position when the read began. Replay only moves forward, so a later
 * statement of the same read sees at least as much.
 */
export async function assertReplayed(db: Db, floor: string): Promise<void> {
  const [row] = await selectRows(db, CAUGHT_UP, `SELECT ${CAUGHT_UP.sql}`, [floor]);
  if (!row?.caughtUp) throw new ReplicaBehind();
}

const CAUGHT_UP = computed({
  caughtUp: ['COALESCE(pg_last_wal_replay_lsn(), pg_current_wal_lsn()) >= $1::pg_lsn', asBoolean],
});

/** The waits between looks at a replica that is behind a read's floor, in ms (then the last one, repeated). */
const CATCH_UP_WAITS_MS = [1, 2, 5, 10, 20, 50];

/**
 * DATABASE_READ_URL (docs/contract.md §21): reads over many events (the list, `q`, statistics, the
 * export) and proofs run on a streaming replica, else on the primary, under one rule: a read never
 * sees less than the primary had committed when the read began. So an event a client was told
 * exists (its 201) is never missing from a read that follows, and a chain never looks shorter.
 *
 * A read first takes the primary's WAL position (its floor: every acknowledged commit is at or
 * before it), then, in its transaction on the replica, checks as its first statement that the
 * replica has replayed that far (assertReplayed). A replica behind is looked at again, a few
 * milliseconds later, for up to READ_REPLICA_MAX_LAG_MS; past that, or when the replica cannot be
 * reached or cancels the read for a replica's reason (a conflict with recovery), the read runs on
 * the primary. Reads do not even try a replica whose replay lag, measured every 250 ms against
 * the primary's WAL, is over the limit: the lag is the age of the newest sample of the primary's
 * position it has replayed. Reads that decide what happens next (an event by id, a chain's head,
 * the verification of an event) keep to the primary.
 */
@Injectable()
export class ReadReplica implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('ReadReplica');
  private replica: { dataSource: DataSource; runner: TransactionRunner } | null = null;
  private connecting: Promise<void> | null = null;
  private lastConnectAttempt = 0;
  private timer: NodeJS.Timeout | null = null;
  private measuring: Promise<void> | null = null;
  /** The primary's WAL position at recent instants (Date.now()), oldest first. */
  private samples: { at: number; lsn: bigint }[] = [];
  /** The lag last measured (ms) and when; null while unknown. */
  private lag: { ms: number; at: number } | null = null;
  /** The primary's cluster and database, read once. */
  private primaryIdentity: { system: string; database: string } | null = null;
  /** Why DATABASE_READ_URL's server is not used (not a standby of the primary's database), once warned; null when it is one. */
  private refused: string | null = null;

  constructor(
    private readonly config: AppConfig,
    private readonly primary: TransactionRunner,
    private readonly metrics: Metrics,
    @InjectDataSource() private readonly primarySource: DataSource,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.databaseReadUrl) return;
    this.metrics.watchReplicaLag(() => (this.lag === null ? null : this.lag.ms / 1000));
    const tick = () => {
      this.measuring ??= this.measure()
        .catch((error: unknown) => {
          if (this.lag !== null) this.logger.warn(`Replica lag unknown, reads go to the primary: ${message(error)}`);
          this.lag = null;
        })
        .finally(() => (this.measuring = null));
    };
    tick();
    this.timer = setInterval(tick, MEASURE_EVERY_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.measuring;
    await this.connecting;
    if (this.replica?.dataSource.isInitialized) await this.replica.dataSource.destroy();
    this.replica = null;
  }

  /** `work` in a READ ONLY transaction whose statements are cancelled past `timeoutMs` (TransactionRunner.runBounded). */
  async runBounded<T>(timeoutMs: number, work: (db: Db) => Promise<T>): Promise<T> {
    const served = await this.onReplicaBounded(timeoutMs, work);
    if (served) return served.value;
    const result = await this.primary.runBounded(timeoutMs, work);
    this.metrics.readServed('primary');
    return result;
  }

  /**
   * A short read (a proof): on the primary, one statement on the pool as before; on the replica,
   * in a read-only transaction under `timeoutMs`, behind the check of its floor.
   */
  async runShort<T>(timeoutMs: number, work: (db: Db) => Promise<T>): Promise<T> {
    const served = await this.onReplicaBounded(timeoutMs, work);
    if (served) return served.value;
    const result = await work(this.primary.pool);
    this.metrics.readServed('primary');
    return result;
  }

  /**
   * Something read over a connection and a transaction of its own (the export's snapshot):
   * `open(dataSource, floor)` on the replica, where it must begin with assertReplayed(floor), else
   * `open(primary, null)`.
   */
  async open<T>(open: (dataSource: DataSource, floor: string | null) => Promise<T>): Promise<T> {
    const served = await this.onReplica(({ dataSource }, floor) => open(dataSource, floor));
    if (served) return served.value;
    const result = await open(this.primarySource, null);
    this.metrics.readServed('primary');
    return result;
  }

  /**
   * The primary's WAL position now, when the replica may serve reads (else null): the floor of a
   * read that runs on connections of its own (whole-chain verification's workers), which must
   * check it on the replica before they read there (assertReplayed's SQL).
   */
  async floor(): Promise<string | null> {
    if (!this.usable()) return null;
    const [primary] = await selectRows(this.primary.pool, PRIMARY_LSN, `SELECT ${PRIMARY_LSN.sql}`);
    return primary!.lsn;
  }

  /** `work` on the replica in a read-only transaction under `timeoutMs` that begins with the check of its floor. */
  private onReplicaBounded<T>(timeoutMs: number, work: (db: Db) => Promise<T>): Promise<{ value: T } | null> {
    return this.onReplica(({ runner }, floor) =>
      runner.runBounded(timeoutMs, async (db) => {
        await assertReplayed(db, floor);
        return work(db);
      }),
    );
  }

  /**
   * `attempt` on the replica with the primary's position now as its floor, while the replica is
   * usable: again after a short wait while it is behind, up to READ_REPLICA_MAX_LAG_MS. Null when
   * the read is the primary's to serve.
   */
  private async onReplica<T>(
    attempt: (replica: { dataSource: DataSource; runner: TransactionRunner }, floor: string) => Promise<T>,
  ): Promise<{ value: T } | null> {
    const replica = this.usable();
    const floor = replica && (await this.floor());
    if (!replica || !floor) return null;
    const deadline = Date.now() + this.config.readReplicaMaxLagMs;
    for (let look = 0; ; look++) {
      try {
        const value = await attempt(replica, floor);
        this.metrics.readServed('replica');
        return { value };
      } catch (error) {
        if (error instanceof ReplicaBehind) {
          const wait = CATCH_UP_WAITS_MS[Math.min(look, CATCH_UP_WAITS_MS.length - 1)]!;
          if (Date.now() + wait > deadline) return null;
          await new Promise((resolve) => setTimeout(resolve, wait));
          continue;
        }
        if (!replicaTrouble(error)) throw error;
        this.lag = null;
        return null;
      }
    }
  }

  /** The replica while its lag, aged since it was measured, is within the limit. */
  private usable(): { dataSource: DataSource; runner: TransactionRunner } | null {
    if (!this.replica || this.lag === null) return null;
    const aged = this.lag.ms + (Date.now() - this.lag.at);
    return aged <= this.config.readReplicaMaxLagMs ? this.replica : null;
  }

  private async measure(): Promise<void> {
    const replica = await this.connected();
    if (!replica) {
      this.lag = null;
      return;
    }
    const [primary] = await selectRows(this.primary.pool, PRIMARY_LSN, `SELECT ${PRIMARY_LSN.sql}`);
    this.samples.push({ at: Date.now(), lsn: lsnOf(primary!.lsn) });
    if (this.samples.length > MAX_SAMPLES) this.samples.shift();
    const [replayed] = await selectRows(replica.manager, REPLICA_STATE, `SELECT ${REPLICA_STATE.sql}`);
    const refused = await this.notStandby(replayed!);
    if (refused !== this.refused && refused !== null)
      this.logger.warn(
        `DATABASE_READ_URL is not a standby of DATABASE_URL's database (${refused}): reads go to the primary`,
      );
    this.refused = refused;
    if (refused !== null) {
      this.lag = null;
      return;
    }
    const position = lsnOf(replayed!.lsn);
    const now = Date.now();
    let reached: { at: number; lsn: bigint } | null = null;
    for (const sample of this.samples) if (sample.lsn <= position) reached = sample;
    // Not even the oldest sample replayed: at least that far behind.
    this.lag = { ms: now - (reached ?? this.samples[0]!).at, at: now };
  }

  /** Null when `server` (a replica's state as measured) is a standby of the primary's cluster and database, else why not. */
  private async notStandby(server: { system: string; database: string; standby: boolean }): Promise<string | null> {
    this.primaryIdentity ??= (await selectRows(this.primary.pool, IDENTITY, `SELECT ${IDENTITY.sql}`))[0]!;
    if (!server.standby) return 'it is not in recovery';
    if (server.system !== this.primaryIdentity.system) return 'it is of another cluster (system identifier)';
    if (server.database !== this.primaryIdentity.database)
      return `it is database ${server.database}, not ${this.primaryIdentity.database}`;
    return null;
  }

  /** The replica's data source, opened on first use and again after a failure (every 5 s at most). */
  private async connected(): Promise<DataSource | null> {
    if (this.replica?.dataSource.isInitialized) return this.replica.dataSource;
    if (Date.now() - this.lastConnectAttempt < RECONNECT_AFTER_MS) return null;
    this.lastConnectAttempt = Date.now();
    this.connecting = (async () => {
      const dataSource = new DataSource(
        dataSourceOptions({
          url: this.config.databaseReadUrl!,
          poolSize: this.config.databasePoolSize,
          applicationName: 'audit-trail-service-reads',
        }),
      );
      try {
        await dataSource.initialize();
        this.replica = { dataSource, runner: new TransactionRunner(dataSource) };
        this.logger.log('Reads over many events may use DATABASE_READ_URL');
      } catch (error) {
        this.logger.warn(`DATABASE_READ_URL unreachable, reads go to the primary: ${message(error)}`);
      }
    })();
    await this.connecting;
    this.connecting = null;
    return this.replica?.dataSource ?? null;
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
