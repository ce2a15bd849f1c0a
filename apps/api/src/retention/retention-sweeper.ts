import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import {
  AppConfig,
  PRUNE_BATCH_MAX_EVENTS,
  PRUNE_BATCH_MILLISECONDS,
  PRUNE_BATCH_MIN_EVENTS,
  PRUNE_DUTY_CYCLE,
  VACUUM_FULL_LOCK_WAIT_MILLISECONDS,
  VACUUM_FULL_MAX_RETAINED_EVENTS,
  VACUUM_FULL_MAX_RETAINED_RATIO,
  VACUUM_FULL_MAX_TABLE_BYTES,
} from '@app/common';
import {
  ChainRetentionRepository,
  CheckpointsRepository,
  LOCK_NOT_AVAILABLE,
  MaintenanceRepository,
  PrunableChain,
  PrunedTable,
  sqlState,
  TransactionRunner,
} from '@app/database';
import { CheckpointsService } from '../checkpoints/checkpoints.service';
import { StreamGaps } from '../streams/delivery/stream-gaps';
import { RetentionAudit } from './retention-audit';

/** How a sweep's batches went: how many, and how long they held their chain's lock (the log line's). */
interface BatchStats {
  count: number;
  heldMilliseconds: number;
  longestMilliseconds: number;
}

/** What a sweep pruned (POST /v1/retention/sweep's answer). */
export interface SweepResult {
  chains: number;
  events: number;
}

/**
 * The retention sweep (docs/contract.md §14): every RETENTION_SWEEP_SECONDS, and on demand. For each chain
 * that neither it nor its account holds, whose first retained event is older than its effective
 * retention:
 * 1. a checkpoint of the chain's head is signed (CheckpointsService.latest, the one signer): it
 *    covers the whole prefix about to go, and the prune never passes its size;
 * 2. the prefix is deleted in batches, each one transaction calling `audit_prune_chain` (migration
 *    1764800000000), which takes the chain's row lock as appends do, checks "prefix, older than the
 *    retention, not on hold" itself, keeps the Merkle nodes proofs still need and the last pruned
 *    event's hash, and deletes the rest; the last batch appends the prune's one `retention.pruned`
 *    entry (first and last pruned positions, reason) in its transaction. An append to that chain
 *    waits for one batch at most, so batches are short: each sized from how long the last one held
 *    the lock to hold it PRUNE_BATCH_MILLISECONDS, and followed by a pause (PRUNE_DUTY_CYCLE) in
 *    which waiting appends take the lock (a row lock is not handed fairly to a waiter when its
 *    holder locks again at once) and have the CPU;
 * 3. once anything was deleted, VACUUM of events and merkle_nodes as RETENTION_VACUUM says (`auto` by
 *    default: FULL, which returns the space to the system but locks both tables while it rewrites
 *    what is retained, only when little remains next to what went and the tables are small enough
 *    for the lock to be short; plain otherwise, whose space is reused by later appends and for
 *    which nothing waits), sizes and durations logged.
 * Sweeps of one instance never overlap; sweeps of several instances meet at the chain locks.
 */
@Injectable()
export class RetentionSweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Retention');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<SweepResult> | null = null;
  private stopping = false;

  constructor(
    private readonly config: AppConfig,
    private readonly transactions: TransactionRunner,
    private readonly chains: ChainRetentionRepository,
    private readonly checkpointRows: CheckpointsRepository,
    private readonly maintenance: MaintenanceRepository,
    private readonly checkpoints: CheckpointsService,
    private readonly audit: RetentionAudit,
    private readonly streamGaps: StreamGaps,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.retentionSweepSeconds === 0) return;
    this.timer = setInterval(() => {
      this.sweep(null).catch((error: unknown) =>
        this.logger.warn(`Retention sweep failed: ${error instanceof Error ? error.message : String(error)}`),
      );
    }, this.config.retentionSweepSeconds * 1000);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearInterval(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** POST /v1/retention/sweep: one sweep of every account, now. */
  async sweepAll(): Promise<{ data: SweepResult }> {
    return { data: await this.sweep(null) };
  }

  /** One sweep of every account's chains (null) or of one account's; a sweep already running is joined, then run again. */
  async sweep(accountId: string | null): Promise<SweepResult> {
    while (this.running) await this.running.catch(() => undefined);
    const run = this.run(accountId);
    this.running = run;
    try {
      return await run;
    } finally {
      if (this.running === run) this.running = null;
    }
  }

  private async run(accountId: string | null): Promise<SweepResult> {
    const offset = this.config.retentionClockOffsetSeconds;
    const result: SweepResult = { chains: 0, events: 0 };
    const batches: BatchStats = { count: 0, heldMilliseconds: 0, longestMilliseconds: 0 };
    const started = performance.now();
    for (const chain of await this.chains.prunable(offset, accountId)) {
      if (this.stopping) break;
      const deleted = await this.pruneChain(chain, offset, batches);
      if (deleted > 0) {
        result.chains++;
        result.events += deleted;
      }
    }
    if (result.events > 0) await this.vacuum(result, performance.now() - started, batches);
    return result;
  }

  /**
   * Signs the head first, then deletes batch after batch until the prefix older than the retention
   * is gone: each batch sized from how long the last one held the chain's lock (nextBatchSize), a
   * pause after each (pauseAfter) in which appends waiting for that lock take it.
   */
  private async pruneChain(chain: PrunableChain, offset: number, batches: BatchStats): Promise<number> {
    await this.checkpoints.latest(chain.accountId, chain.id);
    const signed = await this.checkpointRows.findLatest(chain.id, Number.MAX_SAFE_INTEGER);
    if (!signed) return 0;
    const upTo = signed.size;
    const reason = `older than the retention of ${chain.retentionDays} day(s)`;
    /** The positions pruned by the batches committed so far, null before the first. */
    let committed = null as { first: number; last: number } | null;
    let total = 0;
    let size = PRUNE_BATCH_MIN_EVENTS;
    for (;;) {
      const max = size;
      let locked = 0;
      let done: { batch: { deleted: number; from: number; to: number }; last: boolean };
      try {
        done = await this.transactions.run(async (tx) => {
          await this.chains.lockForPrune(chain.id, tx);
          locked = performance.now();
          const gaps = await this.streamGaps.beforePrune(chain.accountId, chain.id, upTo, max, tx);
          const batch = await this.chains.pruneBatch(chain.id, upTo, max, offset, tx);
          await this.streamGaps.afterPrune(gaps, batch, tx);
          const from = committed?.first ?? (batch.deleted > 0 ? batch.from : null);
          // Decided once, here: a stop that comes while this commits must not end the prune unrecorded.
          const last = batch.deleted < max || this.stopping;
          // The prune's one `retention.pruned` entry, in the transaction of its last batch.
          if (last && from !== null)
            await this.audit.pruned(
              chain.accountId,
              chain.id,
              { firstPrunedPosition: from, lastPrunedPosition: batch.to, reason },
              tx,
            );
          return { batch, last };
        });
      } catch (error) {
        if (committed) await this.recordCommitted(chain, committed, reason);
        throw error;
      }
      const { batch, last } = done;
      // How long the batch held the chain's lock, commit included.
      const elapsed = performance.now() - locked;
      batches.count++;
      batches.heldMilliseconds += elapsed;
      batches.longestMilliseconds = Math.max(batches.longestMilliseconds, elapsed);
      if (batch.deleted > 0) committed = { first: committed?.first ?? batch.from, last: batch.to };
      total += batch.deleted;
      if (last) return total;
      await sleep(pauseAfter(elapsed));
      size = nextBatchSize(max, elapsed);
    }
  }

  /**
   * A batch failed after others committed: their positions are gone, so they are recorded now, in
   * a transaction of their own, before the error goes on (the next sweep records only its own).
   */
  private async recordCommitted(
    chain: PrunableChain,
    { first, last }: { first: number; last: number },
    reason: string,
  ): Promise<void> {
    try {
      await this.transactions.run((tx) =>
        this.audit.pruned(
          chain.accountId,
          chain.id,
          { firstPrunedPosition: first, lastPrunedPosition: last, reason },
          tx,
        ),
      );
    } catch (error) {
      this.logger.error({
        msg: `Positions ${first}–${last} of chain ${chain.id} were pruned but their retention.pruned entry could not be written`,
        err: error,
      });
    }
  }

  /**
   * VACUUM of events and merkle_nodes as RETENTION_VACUUM says (`auto`: FULL when vacuumFullPays
   * on ANALYZE's estimate of the events that remain), then one log line with the sizes before and
   * after, the batches, and how long each step took (a FULL one's time is how long its table was
   * locked).
   */
  private async vacuum(result: SweepResult, pruneMilliseconds: number, batches: BatchStats): Promise<void> {
    const mode = this.config.retentionVacuum;
    const before = await this.storageBytes();
    const full =
      mode === 'full' ||
      (mode === 'auto' && vacuumFullPays(result.events, await this.maintenance.analyzedRows('events'), before));
    const vacuum =
      mode === 'off'
        ? null
        : { events: await this.vacuumTable('events', full), merkleNodes: await this.vacuumTable('merkle_nodes', full) };
    this.logger.log({
      msg: `Pruned ${result.events} event(s) of ${result.chains} chain(s)`,
      events: result.events,
      chains: result.chains,
      pruneMilliseconds: Math.round(pruneMilliseconds),
      batches: batches.count,
      lockHeldMilliseconds: Math.round(batches.heldMilliseconds),
      longestBatchMilliseconds: Math.round(batches.longestMilliseconds),
      vacuum,
      storageBytesBeforeVacuum: before,
      storageBytesAfterVacuum: await this.storageBytes(),
    });
  }

  /**
   * One table's VACUUM, FULL or plain; under `auto` a FULL one waits at most
   * VACUUM_FULL_LOCK_WAIT_MILLISECONDS for its lock (behind a long export, say), then runs plain.
   */
  private async vacuumTable(
    table: PrunedTable,
    full: boolean,
  ): Promise<{ mode: 'full' | 'plain'; milliseconds: number }> {
    const started = performance.now();
    const done = (mode: 'full' | 'plain') => ({ mode, milliseconds: Math.round(performance.now() - started) });
    const lockWaitMilliseconds =
      full && this.config.retentionVacuum === 'auto' ? VACUUM_FULL_LOCK_WAIT_MILLISECONDS : null;
    try {
      await this.maintenance.vacuum(table, { full, lockWaitMilliseconds });
      return done(full ? 'full' : 'plain');
    } catch (error) {
      if (lockWaitMilliseconds === null || sqlState(error) !== LOCK_NOT_AVAILABLE) throw error;
      await this.maintenance.vacuum(table, { full: false, lockWaitMilliseconds: null });
      return done('plain');
    }
  }

  private async storageBytes(): Promise<number> {
    return (await this.maintenance.storageBytes('events')) + (await this.maintenance.storageBytes('merkle_nodes'));
  }
}

/**
 * The size of the batch after one of `size` events that held the chain's lock for
 * `elapsedMilliseconds`: scaled to hold it PRUNE_BATCH_MILLISECONDS, at most twice `size` (a batch
 * too quick to time well does not make the next one huge), within PRUNE_BATCH_MIN_EVENTS …
 * PRUNE_BATCH_MAX_EVENTS.
 */
export function nextBatchSize(size: number, elapsedMilliseconds: number): number {
  const scaled = Math.floor((size * PRUNE_BATCH_MILLISECONDS) / Math.max(elapsedMilliseconds, 1));
  return Math.max(PRUNE_BATCH_MIN_EVENTS, Math.min(PRUNE_BATCH_MAX_EVENTS, 2 * size, scaled));
}

/** The pause after a batch that held the lock `elapsedMilliseconds`: the sweep holds it PRUNE_DUTY_CYCLE of the time. */
export function pauseAfter(elapsedMilliseconds: number): number {
  return (elapsedMilliseconds * (1 - PRUNE_DUTY_CYCLE)) / PRUNE_DUTY_CYCLE;
}

/**
 * RETENTION_VACUUM=auto: whether VACUUM FULL pays after a sweep that deleted `deleted` events of
 * which `retained` remain: the tables are then mostly dead space (what remains at most
 * VACUUM_FULL_MAX_RETAINED_RATIO of what went) and the rewrite under the exclusive lock is short: it
 * reads the old files, `bytes` (at most VACUUM_FULL_MAX_TABLE_BYTES), and copies what remains (at
 * most VACUUM_FULL_MAX_RETAINED_EVENTS).
 */
export function vacuumFullPays(deleted: number, retained: number, bytes: number): boolean {
  return (
    retained <= deleted * VACUUM_FULL_MAX_RETAINED_RATIO &&
    retained <= VACUUM_FULL_MAX_RETAINED_EVENTS &&
    bytes <= VACUUM_FULL_MAX_TABLE_BYTES
  );
}
