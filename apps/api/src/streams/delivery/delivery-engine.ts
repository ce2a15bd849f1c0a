import { hostname } from 'node:os';
import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ulid } from 'ulid';
import { AppConfig, Metrics } from '@app/common';
import { DestinationsRepository, DestinationState, EventTailRepository } from '@app/database';
import { ErasureNotices } from '../../erasure/erasure-notices';
import { SecretBox } from '../secret-box';
import { openSink } from '../sinks';
import { DeliveryAudit } from './delivery-audit';
import { DestinationWorker, WorkerDeps } from './destination-worker';
import { SharedPages } from './shared-pages';

/** How long a page read may be given to other workers of its group, from its start: well under a second (P10). */
const SHARED_READ_MS = 500;

/** A lease outlives this many missed renewals: an instance that stops is replaced within 4 × STREAM_LEASE_SECONDS (≤ 28 s). */
const LEASE_RENEWALS = 3;

/**
 * The delivery engine (docs/contract.md §16). Every STREAM_LEASE_SECONDS each instance claims, in one
 * statement, the leases of every deliverable destination that is its own or that nobody holds (a
 * lease runs out three periods after its last renewal), and runs one DestinationWorker per lease it
 * holds. A destination it no longer holds has its worker ended; one whose version moved on (a change
 * through the API) has it retired (ended once the attempt in flight has its outcome recorded) and
 * then replaced; a change on this instance calls `poke()` so that happens at once. On a stop, the
 * workers end (an attempt in flight is aborted: its batch is sent again later, with the same events)
 * and the leases are given up, so another instance takes over at its next claim.
 */
@Injectable()
export class DeliveryEngine implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger(DeliveryEngine.name);
  private readonly owner = `ins_${ulid()}`;
  private readonly workers = new Map<string, DestinationWorker>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private counts: Record<DestinationState, number> = { active: 0, retrying: 0, paused: 0, disabled: 0 };
  private readonly deps: WorkerDeps;

  constructor(
    private readonly destinations: DestinationsRepository,
    events: EventTailRepository,
    secrets: SecretBox,
    audit: DeliveryAudit,
    private readonly config: AppConfig,
    metrics: Metrics,
    notices: ErasureNotices,
  ) {
    // A read is given to the workers of its group that ask for its window (the next poll of every caught-up
    // worker of the group: two polls at the default 250 ms) for 500 ms from its start, a closed window's and
    // a read of what is committed now alike. An erasure committed here drops the account's reads at once; one
    // committed on another instance is not told here: 500 ms bounds what a read from before it is given after
    // it (docs/contract.md §17).
    const pages = new SharedPages(events, SHARED_READ_MS, SHARED_READ_MS);
    notices.listen((accountId) => pages.erased(accountId));
    this.deps = {
      owner: this.owner,
      hostname: hostname(),
      destinations,
      pages,
      secrets,
      audit,
      config,
      metrics,
      logger: this.logger,
      openSink,
    };
    metrics.watchStreamDestinations(() => this.counts);
  }

  onApplicationBootstrap(): void {
    if (!this.config.streamDelivery) {
      this.stopped = true;
      return;
    }
    this.timer = setInterval(() => this.poke(), this.config.streamLeaseSeconds * 1000);
    this.timer.unref();
    this.poke();
  }

  /** Claims and renews leases now (a destination was created or changed on this instance). */
  poke(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick()
      .catch((error: Error) => this.logger.warn({ msg: `Stream leases were not renewed: ${error.message}` }))
      .finally(() => {
        this.ticking = null;
        if (this.again) {
          this.again = false;
          this.poke();
        }
      });
  }

  private async tick(): Promise<void> {
    const held = await this.destinations.claim(this.owner, this.config.streamLeaseSeconds * LEASE_RENEWALS);
    if (this.stopped) return;
    const versions = new Map(held.map(({ id, version }) => [id, version]));
    for (const [id, worker] of this.workers) {
      const version = versions.get(id);
      if (version === undefined || worker.ended) {
        this.workers.delete(id);
        void worker.end();
      } else if (version !== worker.version) {
        // Changed (replay, PATCH, …): the worker stays, no second one beside it, until its attempt in
        // flight has its outcome recorded; cut short, a change repeated in a loop would send once per change.
        void worker.retire();
      }
    }
    for (const [id, version] of versions) {
      const running = this.workers.get(id);
      if (running && !running.ended) continue;
      const worker = new DestinationWorker(this.deps, id, version);
      this.workers.set(id, worker);
      // A worker that ends by itself (paused, disabled, deleted, lease lost) is replaced at the next claim if still due;
      // a retired one (a change) at once.
      void worker.done.then(() => {
        if (this.workers.get(id) !== worker) return;
        this.workers.delete(id);
        if (worker.retired && !this.stopped) this.poke();
      });
    }
    this.counts = await this.destinations.countByState();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.ticking;
    await Promise.all([...this.workers.values()].map((worker) => worker.end()));
    this.workers.clear();
    await this.destinations
      .release(this.owner)
      .catch((error: Error) => this.logger.warn({ msg: `Stream leases were not given up: ${error.message}` }));
  }
}
