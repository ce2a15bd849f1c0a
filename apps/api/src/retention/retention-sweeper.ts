import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig, PRUNE_BATCH_EVENTS } from '@app/common';
import {
  ChainsRepository,
  CheckpointsRepository,
  EventsRepository,
  MerkleNodesRepository,
  PrunableChain,
  TransactionRunner,
} from '@app/database';
import { CheckpointsService } from '../checkpoints/checkpoints.service';
import { RetentionAudit } from './retention-audit';

/** What a sweep pruned (POST /v1/retention/sweep's answer). */
export interface SweepResult {
  chains: number;
  events: number;
}

/**
 * The retention sweep (contract §14): every RETENTION_SWEEP_SECONDS, and on demand. For each chain
 * that neither it nor its account holds, whose first retained event is older than its effective
 * retention:
 * 1. a checkpoint of the chain's head is signed (CheckpointsService.latest, the one signer): it
 *    covers the whole prefix about to go, and the prune never passes its size;
 * 2. the prefix is deleted in transactions of at most PRUNE_BATCH_EVENTS events, each one call of
 *    `audit_prune_chain` (migration 1764800000000), which takes the chain's row lock as appends do,
 *    checks "prefix, older than the retention, not on hold" itself, keeps the Merkle nodes proofs
 *    still need and the last pruned event's hash, and deletes the rest; the last batch appends the
 *    prune's one `retention.pruned` entry (first and last pruned positions, reason) in its
 *    transaction. An append to that chain waits for one batch at most.
 * 3. once anything was deleted, VACUUM of events and merkle_nodes as RETENTION_VACUUM says (`plain` by
 *    default: the space is reused by later appends, nothing waits; `full` returns it to the system but
 *    locks both tables while it rewrites what is retained), sizes logged before and after.
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
    private readonly chains: ChainsRepository,
    private readonly checkpointRows: CheckpointsRepository,
    private readonly events: EventsRepository,
    private readonly nodes: MerkleNodesRepository,
    private readonly checkpoints: CheckpointsService,
    private readonly audit: RetentionAudit,
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
    for (const chain of await this.chains.prunable(offset, accountId)) {
      if (this.stopping) break;
      const deleted = await this.pruneChain(chain, offset);
      if (deleted > 0) {
        result.chains++;
        result.events += deleted;
      }
    }
    if (result.events > 0 && this.config.retentionVacuum !== 'off') await this.vacuum(result);
    return result;
  }

  /** Signs the head first, then deletes batch after batch until the prefix older than the retention is gone. */
  private async pruneChain(chain: PrunableChain, offset: number): Promise<number> {
    await this.checkpoints.latest(chain.accountId, chain.id);
    const signed = await this.checkpointRows.findLatest(chain.id, Number.MAX_SAFE_INTEGER);
    if (!signed) return 0;
    const upTo = Number(signed.size);
    const reason = `older than the retention of ${chain.retentionDays} day(s)`;
    let first: number | null = null;
    let total = 0;
    for (;;) {
      const pruned = await this.transactions.run(async (tx) => {
        const batch = await this.chains.pruneBatch(chain.id, upTo, PRUNE_BATCH_EVENTS, offset, tx);
        const from = first ?? (batch.deleted > 0 ? batch.from : null);
        // The prune's one `retention.pruned` entry, in the transaction of its last batch.
        if ((batch.deleted < PRUNE_BATCH_EVENTS || this.stopping) && from !== null)
          await this.audit.pruned(
            chain.accountId,
            chain.id,
            { firstPrunedPosition: from, lastPrunedPosition: batch.to, reason },
            tx,
          );
        return batch;
      });
      if (pruned.deleted > 0) first ??= pruned.from;
      total += pruned.deleted;
      if (pruned.deleted < PRUNE_BATCH_EVENTS || this.stopping) return total;
    }
  }

  private async vacuum(result: SweepResult): Promise<void> {
    const before = (await this.events.storageBytes()) + (await this.nodes.storageBytes());
    const full = this.config.retentionVacuum === 'full';
    await this.events.vacuum(full);
    await this.nodes.vacuum(full);
    const after = (await this.events.storageBytes()) + (await this.nodes.storageBytes());
    this.logger.log({
      msg: `Pruned ${result.events} event(s) of ${result.chains} chain(s)`,
      events: result.events,
      chains: result.chains,
      storageBytesBeforeVacuum: before,
      storageBytesAfterVacuum: after,
    });
  }
}
