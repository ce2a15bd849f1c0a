import { Global, Injectable, Module } from '@nestjs/common';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What a gauge reads at scrape time. */
export interface AppendQueueLoad {
  events: number;
  bytes: number;
}
export interface PoolLoad {
  idle: number;
  used: number;
  waiting: number;
}

/** Seconds, from 1 ms to 10 s: requests and append transactions alike. */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Events per append transaction, up to APPEND_BATCH_SIZE's ceiling. */
/** Seconds from append to a stream's receiver, 10 ms to an hour (a receiver that was down). */
const LAG_BUCKETS = [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600];
const SIZE_BUCKETS = [1, 2, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000];

/**
 * The service's Prometheus metrics (docs/contract.md §11), behind a small typed API: features call
 * `metrics.eventsAppended(n)` and never see prom-client. One registry per instance (not the
 * global one), so apps in one process (tests) do not share counts. No label takes an id, an
 * account, an actor or a path: `route` is a route template, `status` a status code, `result`
 * valid/invalid. Request series are cached per label set, so counting a request allocates nothing.
 */
/** At most this many `action` series of audit_schema_violations_total per process; beyond, `other`. */
export const SCHEMA_VIOLATION_SERIES = 200;

@Injectable()
export class Metrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template (or unmatched) and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  private readonly requestSeconds = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from a request arriving to its response ending, by method and route template',
    labelNames: ['method', 'route'] as const,
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  private readonly appended = this.counter('audit_events_appended_total', 'Events appended (committed)');
  private readonly transactionEvents = new Histogram({
    name: 'audit_append_transaction_events',
    help: 'Events per committed append transaction (group commit)',
    buckets: SIZE_BUCKETS,
    registers: [this.registry],
  });
  private readonly commitSeconds = new Histogram({
    name: 'audit_append_commit_duration_seconds',
    help: 'Time of one append transaction, from its start to its commit (retries included)',
    buckets: DURATION_BUCKETS,
    registers: [this.registry],
  });
  private readonly chainVerifications = new Counter({
    name: 'audit_chain_verifications_total',
    help: 'Whole-chain verifications completed, by result (valid or invalid)',
    labelNames: ['result'] as const,
    registers: [this.registry],
  });
  private readonly verifiedEvents = this.counter(
    'audit_verified_events_total',
    'Events checked by verifications (whole chains and single events)',
  );
  private readonly checkpointsSigned = this.counter('audit_checkpoints_signed_total', 'Checkpoints signed');
  private readonly witnessRefusals = new Counter({
    name: 'audit_witness_refusals_total',
    help: 'Log checkpoints a witness refused, or the service refused to send it (contract §18), by witness name',
    labelNames: ['witness'] as const,
    registers: [this.registry],
  });
  private readonly witnessCosignatures = new Counter({
    name: 'audit_witness_cosignatures_total',
    help: 'Valid cosignatures of log checkpoints stored (contract §18), by witness name',
    labelNames: ['witness'] as const,
    registers: [this.registry],
  });
  private readonly authFailures = this.counter(
    'audit_auth_failures_total',
    'Requests refused for a missing, unknown or revoked API key (401)',
  );
  private readonly rateLimited = this.counter(
    'audit_rate_limited_total',
    'Requests refused with 429 by a rate limit (per key, or refused keys per client address)',
  );
  private readonly streamDelivered = new Counter({
    name: 'audit_stream_delivered_events_total',
    help: 'Events a stream destination acknowledged (contract §16), by destination kind',
    labelNames: ['kind'],
    registers: [this.registry],
  });
  private readonly streamAttempts = new Counter({
    name: 'audit_stream_attempts_total',
    help: 'Delivery attempts of stream batches by destination kind and result (ok, http_error, network_error)',
    labelNames: ['kind', 'result'],
    registers: [this.registry],
  });
  private readonly streamLag = new Histogram({
    name: 'audit_stream_lag_seconds',
    help: 'How long after its append each acknowledged batch of a stream reached its receiver (its oldest event)',
    buckets: LAG_BUCKETS,
    registers: [this.registry],
  });
  private readonly reads = new Counter({
    name: 'audit_db_reads_total',
    help: 'Reads over many events (list, search, statistics), by the side that served them: primary or replica',
    labelNames: ['side'] as const,
    registers: [this.registry],
  });
  private readonly schemaViolations = new Counter({
    name: 'audit_schema_violations_total',
    help: 'Events stored under a warn schema they did not satisfy (contract §19), by the schema’s action pattern',
    labelNames: ['action'] as const,
    registers: [this.registry],
  });
  /** The action patterns schemaViolations has a series for: at most SCHEMA_VIOLATION_SERIES, the rest `other`. */
  private readonly schemaViolationPatterns = new Set<string>();
  /** Series by route, then method, then status: one lookup per level, no string built per request. */
  private readonly requestSeries = new Map<string, Map<string, Map<number, RequestSeries>>>();

  constructor() {
    this.gauge('audit_append_queue_events', 'Events waiting in the append queue', []);
    this.gauge('audit_append_queue_bytes', 'Bytes of events waiting in the append queue', []);
    this.gauge('audit_db_pool_connections', 'Database pool connections by state', ['state']);
    this.gauge('audit_stream_destinations', 'Stream destinations by state (all instances)', ['state']);
  }

  /** One answered request; `route` is its template or `unmatched`. */
  requestAnswered(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.requestSeries.get(route);
    if (!byMethod) this.requestSeries.set(route, (byMethod = new Map<string, Map<number, RequestSeries>>()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map<number, RequestSeries>()));
    let series = byStatus.get(status);
    if (!series) {
      const duration = this.requestSeconds.labels(method, route);
      series = { count: this.requests.labels(method, route, String(status)), duration };
      byStatus.set(status, series);
    }
    series.count.inc();
    series.duration.observe(seconds);
  }

  /** One committed append transaction of `events` events that took `seconds`. */
  appendCommitted(events: number, seconds: number): void {
    this.appended.inc(events);
    this.transactionEvents.observe(events);
    this.commitSeconds.observe(seconds);
  }

  chainVerified(valid: boolean, checkedEvents: number): void {
    this.chainVerifications.labels(valid ? 'valid' : 'invalid').inc();
    this.verifiedEvents.inc(checkedEvents);
  }

  eventVerified(): void {
    this.verifiedEvents.inc();
  }

  checkpointSigned(): void {
    this.checkpointsSigned.inc();
  }

  /** `witness` is a configured witness's key name (a bounded set, not an id). */
  witnessRefused(witness: string): void {
    this.witnessRefusals.inc({ witness });
  }

  witnessCosigned(witness: string): void {
    this.witnessCosignatures.inc({ witness });
  }

  authenticationFailed(): void {
    this.authFailures.inc();
  }

  requestRateLimited(): void {
    this.rateLimited.inc();
  }

  /** The append queue's gauges read `load` at each scrape. */
  watchAppendQueue(load: () => AppendQueueLoad): void {
    this.readAtScrape('audit_append_queue_events', () => [[{}, load().events]]);
    this.readAtScrape('audit_append_queue_bytes', () => [[{}, load().bytes]]);
  }

  /** The pool gauge reads `load` at each scrape. */
  watchDbPool(load: () => PoolLoad): void {
    this.readAtScrape('audit_db_pool_connections', () => {
      const { idle, used, waiting } = load();
      return [
        [{ state: 'idle' }, idle],
        [{ state: 'used' }, used],
        [{ state: 'waiting' }, waiting],
      ];
    });
  }

  /**
   * The replica's lag in seconds, read at each scrape; null while unknown (not reachable), reported
   * as +Inf, so that an alert on the lag also fires for a replica that is gone. Only with a
   * replica (DATABASE_READ_URL): without one, the metric is absent.
   */
  watchReplicaLag(lag: () => number | null): void {
    this.gauge(
      'audit_db_replica_lag_seconds',
      'How far DATABASE_READ_URL replays behind the primary, in seconds (+Inf while it cannot be reached)',
      [],
    );
    this.readAtScrape('audit_db_replica_lag_seconds', () => [[{}, lag() ?? Infinity]]);
  }

  /**
   * `events` events stored under the warn schema of `pattern` without satisfying it. Patterns are
   * chosen by tenants, so the label takes at most SCHEMA_VIOLATION_SERIES of them per process
   * (the first seen), the rest as `other`: the metric stays a bounded set of series.
   */
  schemaViolated(pattern: string, events = 1): void {
    let label = pattern;
    if (!this.schemaViolationPatterns.has(pattern)) {
      if (this.schemaViolationPatterns.size < SCHEMA_VIOLATION_SERIES) this.schemaViolationPatterns.add(pattern);
      else label = 'other';
    }
    this.schemaViolations.labels(label).inc(events);
  }

  /** One read over many events, served by `side`. */
  readServed(side: 'primary' | 'replica'): void {
    this.reads.inc({ side });
  }

  /** A batch of `events` events the receiver acknowledged, the oldest appended `lagSeconds` ago. */
  streamBatchDelivered(kind: string, events: number, lagSeconds: number): void {
    this.streamDelivered.labels(kind).inc(events);
    this.streamLag.observe(Math.max(0, lagSeconds));
  }

  /** One attempt to deliver a batch: `ok`, `http_error` (the receiver refused it) or `network_error` (no answer). */
  streamAttempted(kind: string, result: 'ok' | 'http_error' | 'network_error'): void {
    this.streamAttempts.labels(kind, result).inc();
  }

  /** The destinations gauge reads `counts` at each scrape. */
  watchStreamDestinations(counts: () => Record<string, number>): void {
    this.readAtScrape('audit_stream_destinations', () =>
      Object.entries(counts()).map(([state, n]) => [{ state }, n] as [Record<string, string>, number]),
    );
  }

  /** Adds the Node.js process defaults (CPU, memory, event loop lag, GC…): done once the metrics are served. */
  collectProcessDefaults(): void {
    collectDefaultMetrics({ register: this.registry });
  }

  /** The text a scrape gets (exposition format 0.0.4). */
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  private counter(name: string, help: string): Counter {
    return new Counter({ name, help, registers: [this.registry] });
  }

  private readonly sources = new Map<string, () => [Record<string, string>, number][]>();

  private gauge(name: string, help: string, labelNames: string[]): void {
    const sources = this.sources;
    new Gauge({
      name,
      help,
      labelNames,
      registers: [this.registry],
      collect(this: Gauge) {
        this.reset();
        for (const [labels, value] of sources.get(name)?.() ?? []) this.set(labels, value);
      },
    });
  }

  private readAtScrape(name: string, read: () => [Record<string, string>, number][]): void {
    this.sources.set(name, read);
  }
}

interface RequestSeries {
  count: { inc(): void };
  duration: { observe(value: number): void };
}

/** Metrics, injectable everywhere (features, libs/auth, libs/database). */
@Global()
@Module({ providers: [Metrics], exports: [Metrics] })
export class MetricsModule {}
