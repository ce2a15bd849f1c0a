import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig, Metrics } from '@app/common';
import { dataSourceOptions } from './data-source-options';
import { asString, computed, selectRows } from './schema/table';
import { Db, sqlState, TransactionRunner } from './transaction-runner';

/** How often the replica's lag is measured. */
const MEASURE_EVERY_MS = 250;
/** A replica that could not be reached is tried again this long after. */
const RECONNECT_AFTER_MS = 5000;
/** The primary's WAL positions remembered, at most (a minute of measurements). */
const MAX_SAMPLES = 240;

/** The primary's WAL position now; on a replica, the position it has replayed (on a primary, there is none: it is current). */
const PRIMARY_LSN = computed({ lsn: ['pg_current_wal_lsn()::text', asString] });
const REPLAYED_LSN = computed({ lsn: ['COALESCE(pg_last_wal_replay_lsn(), pg_current_wal_lsn())::text', asString] });

/** `X/Y` (pg_lsn as text) as one number. */
function lsnOf(text: string): bigint {
  const [high = '0', low = '0'] = text.split('/');
  return (BigInt(`0x${high}`) << 32n) + BigInt(`0x${low}`);
}

/**
 * Failures of a read on the replica that the primary would not have: the replica unreachable or
 * restarting (classes 08, 57P), a query cancelled by a conflict with recovery (40001), a socket
 * error. Such a read runs again on the primary; a timeout (57014) or a bad query does not.
 */
function replicaTrouble(error: unknown): boolean {
  // sqlState answers any string code: SQLSTATEs and socket errors (ECONNREFUSED…) alike.
  const code = sqlState(error);
  if (/^(08|57P)/.test(code) || code === '40001' || /^E[A-Z]+$/.test(code)) return true;
  return error instanceof Error && /Connection terminated|connection error/i.test(error.message);
}

/**
 * DATABASE_READ_URL (docs/contract.md §21): reads over many events (the list, `q`, statistics) run
 * on a streaming replica while it replays within READ_REPLICA_MAX_LAG_MS of the primary, else on
 * the primary. The lag is measured, every 250 ms, against the primary's WAL: the primary's position
 * is sampled, then the replica's replay position read; the replica is at most as far behind as the
 * newest sample it has replayed is old. A read goes to the replica only while that lag, plus the
 * time since it was measured, is within the limit; a replica that cannot be reached, or whose read
 * fails for a replica's reason (a conflict with recovery), leaves the read to the primary. Reads of
 * something a client was told exists (an event by id, a chain's head and verification of an
 * event, proofs) never come here: they read the primary, so they never answer 404 or an older state.
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

  constructor(
    private readonly config: AppConfig,
    private readonly primary: TransactionRunner,
    private readonly metrics: Metrics,
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

  /**
   * `work` in a read-only transaction under `timeoutMs` (TransactionRunner.runBounded), on the
   * replica while it is within the lag limit, else (or when the replica fails it) on the primary.
   */
  async runBounded<T>(timeoutMs: number, work: (db: Db) => Promise<T>): Promise<T> {
    const replica = this.usable();
    if (replica) {
      try {
        const result = await replica.runBounded(timeoutMs, work);
        this.metrics.readServed('replica');
        return result;
      } catch (error) {
        if (!replicaTrouble(error)) throw error;
        this.lag = null;
      }
    }
    const result = await this.primary.runBounded(timeoutMs, work);
    this.metrics.readServed('primary');
    return result;
  }

  /** The replica's runner while its lag, aged since it was measured, is within the limit. */
  private usable(): TransactionRunner | null {
    if (!this.replica || this.lag === null) return null;
    const aged = this.lag.ms + (Date.now() - this.lag.at);
    return aged <= this.config.readReplicaMaxLagMs ? this.replica.runner : null;
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
    const [replayed] = await selectRows(replica.manager, REPLAYED_LSN, `SELECT ${REPLAYED_LSN.sql}`);
    const position = lsnOf(replayed!.lsn);
    const now = Date.now();
    let reached: { at: number; lsn: bigint } | null = null;
    for (const sample of this.samples) if (sample.lsn <= position) reached = sample;
    // Not even the oldest sample replayed: at least that far behind.
    this.lag = { ms: now - (reached ?? this.samples[0]!).at, at: now };
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
