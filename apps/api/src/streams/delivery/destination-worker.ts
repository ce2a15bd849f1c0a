import { createHash } from 'node:crypto';
import type { Logger } from '@nestjs/common';
import type { AppConfig, Metrics } from '@app/common';
import { parseSearchQuery } from '@app/common';
import type { DestinationRow, DestinationsRepository, EventRecord, StoredStreamPosition } from '@app/database';
import type { EventView } from '../../events/dto/event.view';
import { CommittedEvent, CommittedEventReader } from '../../events/stream/committed-event-reader';
import { toEventView } from '../../events/event.mapper';
import { DestinationCredentials, signingSecrets } from '../destination-credentials';
import type { SecretBox } from '../secret-box';
import { destinationUrlProblem } from '../sinks';
import type { Delivery, DestinationFormat, DestinationKind, Sink, SinkTarget } from '../sinks';
import { retryDelay } from './backoff';
import type { DeliveryAudit } from './delivery-audit';
import type { SharedPages } from './shared-pages';
import { pause } from '../../common/pause';

/** What a worker needs from the engine. */
export interface WorkerDeps {
  owner: string;
  hostname: string;
  destinations: DestinationsRepository;
  /** The page reads, shared by the workers of an account with the same `q` at the same position. */
  pages: SharedPages;
  secrets: SecretBox;
  audit: DeliveryAudit;
  config: AppConfig;
  metrics: Metrics;
  logger: Logger;
  /** The sinks' openSink (a test's fake receiver in unit tests). */
  openSink: (target: SinkTarget) => Sink;
}

/**
 * Delivers one destination while this instance holds its lease (docs/contract.md §16): reads the account's
 * matching events in commit order from the stored position (CommittedEventReader, the live tail's
 * reader), sends them in batches of `batchSize`, and stores the position after each batch the
 * receiver acknowledged, naming its lease and the destination's version: a change made through the
 * API, or another instance's lease, ends this worker at its next write. A failed batch is retried
 * (the same events, the same batch id) with backoff until it is acknowledged or the destination is
 * paused or disabled; later batches wait, so order holds. The backoff is the destination's, stored
 * with each failure (its failure count and when the next attempt may be): a worker starts by waiting
 * what is left of it, so a pause, resume, replay, change, restart or failover, each of which starts
 * a new worker, never sends sooner than the backoff allows (docs/contract.md §16 "Failures").
 */
export class DestinationWorker {
  /** Ends delivery at once, an attempt in flight aborted (a stop, a lease gone). */
  private readonly stop = new AbortController();
  /** Ends delivery once the attempt in flight, if any, has its outcome recorded (a change through the API). */
  private readonly retiring = new AbortController();
  /** Either: no new attempt, wait or read. */
  private readonly over = AbortSignal.any([this.stop.signal, this.retiring.signal]);
  readonly done: Promise<void>;

  constructor(
    private readonly deps: WorkerDeps,
    readonly id: string,
    readonly version: number,
  ) {
    this.done = this.run().catch((error: Error) => {
      // The database went away or the row changed under us: the engine's next claim starts it again.
      if (!this.stop.signal.aborted)
        deps.logger.warn({ msg: `Stream delivery stopped: ${error.message}`, destinationId: id });
    });
  }

  /** Ends delivery: an attempt in flight is aborted, a wait cut short. */
  end(): Promise<void> {
    this.stop.abort();
    return this.done;
  }

  /**
   * Ends delivery after the attempt in flight: its outcome is recorded (a failure and its backoff
   * too, though the version moved on), so a change made while an attempt runs neither cuts it short
   * nor lets the next worker send again at once; a wait is cut short.
   */
  retire(): Promise<void> {
    this.retiring.abort();
    return this.done;
  }

  get ended(): boolean {
    return this.stop.signal.aborted;
  }

  get retired(): boolean {
    return this.retiring.signal.aborted;
  }

  private async run(): Promise<void> {
    const { destinations, pages, config } = this.deps;
    const row = await destinations.findForDelivery(this.id);
    if (!row || row.version !== this.version || (row.state !== 'active' && row.state !== 'retrying')) return;
    this.failures = row.consecutiveFailures;
    await pause(row.backoffMs, this.over);
    if (this.over.aborted) return;
    let sink: Sink;
    try {
      // A URL allowed when it was set may not be now (an http:// one once STREAM_ALLOW_PRIVATE_NETWORKS is off).
      const problem = destinationUrlProblem(row.kind as DestinationKind, row.url, config.streamAllowPrivateNetworks);
      if (problem !== null) throw new Error(`url ${problem}`);
      sink = this.deps.openSink(this.targetOf(row));
    } catch (error) {
      // Credentials sealed under another SECRETS_KEY, or a URL this instance may not send to (an http://
      // destination once STREAM_ALLOW_PRIVATE_NETWORKS is off): said where people look, tried again at the next claim.
      const message = (error as Error).message;
      await this.failed(row, { ok: false, status: null, message, action: 'retry', retryAfterMs: null });
      return;
    }
    // A rotated-out webhook secret stops signing at its `until`: the worker retires then (after the attempt in
    // flight), and the engine starts one that signs with the current secret alone.
    const expiry = this.secretExpiry;
    const retire =
      expiry === null ? undefined : setTimeout(() => this.retiring.abort(), Math.max(0, expiry - Date.now()));
    try {
      const filters = { search: row.q === null ? undefined : parseSearchQuery(row.q).terms };
      const reader = new CommittedEventReader(pages.source(row.accountId, row.q), row.accountId, filters, row.position);
      let caughtUp = row.caughtUp;
      for await (const page of reader.pages(config.streamPollMilliseconds, this.over)) {
        if (page.events.length === 0) {
          if (page.caughtUp && !caughtUp) {
            caughtUp = true;
            if (!(await this.acked) || !(await destinations.caughtUp(this.id, this.deps.owner, this.version))) return;
          }
          continue;
        }
        caughtUp = false;
        for (let start = 0; start < page.events.length; start += row.batchSize) {
          const batch = page.events.slice(start, start + row.batchSize);
          const last = start + row.batchSize >= page.events.length;
          if (!(await this.deliver(row, sink, batch, last && page.caughtUp))) return;
          if (last && page.caughtUp) caughtUp = true;
        }
      }
    } finally {
      clearTimeout(retire);
      // The last acknowledged batch's position is stored before the worker ends (a stop waits for it).
      await this.acked.catch(() => false);
      await sink.close().catch(() => undefined);
    }
  }

  /**
   * The position of the last acknowledged batch being stored: the next batch is sent meanwhile, and
   * its own position written only after this one (false: the lease or version is gone, stop).
   */
  private acked: Promise<boolean> = Promise.resolve(true);

  /** Failed attempts since the last acknowledged batch: the backoff's exponent (stored as consecutiveFailures). */
  private failures = 0;

  /** Sends one batch until the receiver acknowledges it, then stores its position; false when delivery must end. */
  private async deliver(row: DestinationRow, sink: Sink, batch: CommittedEvent[], caughtUp: boolean): Promise<boolean> {
    const { metrics } = this.deps;
    const views = batch.map(({ event }) => viewOf(event));
    const id = batchId(this.id, views);
    for (;;) {
      if (this.over.aborted) return false;
      const outcome = await sink.deliver({ id, events: views }, this.stop.signal);
      if (this.stop.signal.aborted) return false;
      metrics.streamAttempted(row.kind, outcome.ok ? 'ok' : outcome.status === null ? 'network_error' : 'http_error');
      if (outcome.ok) {
        this.failures = 0;
        // This batch was sent while the last one's position was being written; the writes stay in order.
        if (!(await this.acked)) return false;
        this.acked = this.acknowledge(row, batch, caughtUp);
        this.acked.catch(() => undefined); // awaited before the next batch's, or at the end
        return true;
      }
      // The last batch's position first: its write (which clears the failure count) must not land after this failure's.
      if (!(await this.acked)) return false;
      const wait = await this.failed(row, outcome);
      if (wait === null) return false;
      await pause(wait, this.over);
    }
  }

  private async acknowledge(row: DestinationRow, batch: CommittedEvent[], caughtUp: boolean): Promise<boolean> {
    const last = batch[batch.length - 1]!;
    const position: StoredStreamPosition = last.position;
    const stored = await this.deps.destinations.acknowledged(this.id, this.deps.owner, this.version, {
      position,
      events: batch.length,
      lastEventAt: last.event.timestamp,
      caughtUp,
    });
    if (stored) {
      const oldest = batch[0]!.event.timestamp.getTime();
      this.deps.metrics.streamBatchDelivered(row.kind, batch.length, (Date.now() - oldest) / 1000);
    }
    return stored;
  }

  /**
   * Records a failed attempt with its backoff (and, when it ends delivery, why, in `_audit`): the
   * wait before the next attempt, or null when delivery must end.
   */
  private async failed(row: DestinationRow, outcome: Extract<Delivery, { ok: false }>): Promise<number | null> {
    this.failures += 1;
    const retryInMs = retryDelay(this.failures, outcome.retryAfterMs);
    const error = { at: new Date().toISOString(), status: outcome.status, message: outcome.message };
    const state = await this.deps.audit.failed(row, this.deps.owner, this.version, error, {
      action: outcome.action,
      retryInMs,
    });
    return state === 'retrying' ? retryInMs : null;
  }

  /** When the earliest rotated-out secret the sink signs with stops signing (ms since the epoch), or null. */
  private secretExpiry: number | null = null;

  private targetOf(row: DestinationRow): SinkTarget {
    const credentials = this.deps.secrets.open<DestinationCredentials>(row.id, row.secrets);
    const now = new Date();
    const untils = (credentials.webhookSecrets ?? [])
      .map(({ until }) => (until === null ? NaN : Date.parse(until)))
      .filter((until) => until > now.getTime());
    this.secretExpiry = untils.length === 0 ? null : Math.min(...untils);
    return {
      kind: row.kind as DestinationKind,
      url: row.url,
      format: row.format as DestinationFormat,
      timeoutSeconds: row.timeoutSeconds,
      headers: credentials.headers,
      secrets: {
        webhookSecrets: signingSecrets(credentials, now),
        token: credentials.token,
        apiKey: credentials.apiKey,
      },
      options: row.options,
      allowPrivateNetworks: this.deps.config.streamAllowPrivateNetworks,
      hostname: this.deps.hostname,
    };
  }
}

/** Each event's view, made once however many workers send it (they share the page's records: shared-pages.ts). */
const views = new WeakMap<EventRecord, EventView>();

function viewOf(event: EventRecord): EventView {
  let view = views.get(event);
  if (view === undefined) {
    view = toEventView(event);
    views.set(event, view);
  }
  return view;
}

/**
 * A batch's id (a webhook's `webhook-id`): the same for the same events of the same destination,
 * so every retry, and a resend after a restart or a failover that starts from the same position,
 * carries the id of the first attempt.
 */
export function batchId(destinationId: string, events: readonly { id: string }[]): string {
  const hash = createHash('sha256').update(destinationId);
  for (const { id } of events) hash.update(`\n${id}`);
  return `msg_${hash.digest('base64url').slice(0, 32)}`;
}
