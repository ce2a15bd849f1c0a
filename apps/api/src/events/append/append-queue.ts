import { performance } from 'node:perf_hooks';
import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { AppConfig, AppError, Metrics, uuidToUlid } from '@app/common';
import { DatabaseLocator, isDataError, sqlState } from '@app/database';
import { BodyAdmission } from '../../common/json-body';
import { AppendRequest, StaleSchemas } from './append-request';
import { AppendUnit, IdempotentLedger, Replay, Written } from './idempotent-ledger';

/** One request waiting: a single event, or a batch that is written in one transaction or not at all. */
interface Waiting {
  unit: AppendUnit;
  /** Its chains (account + name), each once. */
  chains: string[];
  bytes: number;
  /** Its events, or the replay of its Idempotency-Key's answer (stored by another request meanwhile). */
  resolve: (outcome: Written | Replay) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit. Up to APPEND_CONCURRENCY transactions are in flight at once, each carrying every
 * waiting request whose chains are not already being written by another one; events of a busy
 * chain wait and go together in that chain's next transaction. So one hot chain gets one lock
 * round, one insert and one commit for many events, quiet chains share transactions, and no two
 * of our transactions ever queue on the same chain lock. Per chain, events are written in arrival
 * order. A request (a single event or a batch) is one unit: all its events go in one transaction,
 * with whatever else is waiting, or none do. A request settles only after its transaction committed (or
 * failed), so a 2xx means committed. The queue is bounded, in events (APPEND_QUEUE_LIMIT) and in
 * bytes (APPEND_QUEUE_LIMIT_BYTES, docs/contract.md §8): when full, callers get 503 + Retry-After. Each
 * transaction is the IdempotentLedger's (the ChainLedger's, with its requests' Idempotency-Keys),
 * retried after a serialization failure or deadlock by the TransactionRunner.
 */
@Injectable()
export class AppendQueue implements BeforeApplicationShutdown, BodyAdmission {
  private readonly logger = new Logger('AppendQueue');
  private waiting: Waiting[] = [];
  /** Events of everything waiting. */
  private waitingEvents = 0;
  /** appendRequestBytes of everything waiting. */
  private waitingBytes = 0;
  /** Chains (account + name) that an in-flight transaction is writing. */
  private readonly busyChains = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly maxInFlight: number;

  constructor(
    private readonly ledger: IdempotentLedger,
    private readonly config: AppConfig,
    database: DatabaseLocator,
    private readonly metrics: Metrics,
  ) {
    // Leave connections for reads; the embedded database has only one anyway.
    this.maxInFlight = Math.max(1, Math.min(config.appendConcurrency, database.settings.poolSize - 1));
    metrics.watchAppendQueue(() => ({ events: this.waitingEvents, bytes: this.waitingBytes }));
  }

  /**
   * Before an append's body is read (`@AdmitBody(AppendQueue)`): a full queue answers 503 at once,
   * so a client retrying against a full queue costs no reading, parsing or validating of its body.
   */
  admitBody(): void {
    if (this.waitingEvents >= this.config.appendQueueLimit || this.waitingBytes >= this.config.appendQueueLimitBytes) {
      throw queueFull();
    }
  }

  /**
   * Appends the unit's events atomically, events of one chain at consecutive positions in this order;
   * or, if its Idempotency-Key was answered meanwhile, appends nothing and resolves to that answer.
   */
  append(unit: AppendUnit): Promise<Written | Replay> {
    const { events } = unit;
    let bytes = 0;
    for (const event of events) bytes += appendRequestBytes(event);
    if (
      this.waitingEvents + events.length > this.config.appendQueueLimit ||
      this.waitingBytes + bytes > this.config.appendQueueLimitBytes
    ) {
      return Promise.reject(queueFull());
    }
    const chains = events.length === 1 ? [chainOf(events[0]!)] : [...new Set(events.map(chainOf))];
    return new Promise<Written | Replay>((resolve, reject) => {
      this.waiting.push({ unit, chains, bytes, resolve, reject });
      this.waitingEvents += events.length;
      this.waitingBytes += bytes;
      // After every pump, whatever still waits belongs to a busy chain or has no free slot; a
      // request all of whose chains are busy can start nothing, so it skips the scan (a hot chain stays O(1)).
      if (chains.some((chain) => !this.busyChains.has(chain))) this.pump();
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private pump(): void {
    while (this.inFlight.size < this.maxInFlight) {
      const batch = this.takeBatch();
      if (batch.length === 0) return;
      const chains = new Set(batch.flatMap((w) => w.chains));
      chains.forEach((chain) => this.busyChains.add(chain));
      const written: Promise<void> = this.write(batch).finally(() => {
        chains.forEach((chain) => this.busyChains.delete(chain));
        this.inFlight.delete(written);
        this.pump();
      });
      this.inFlight.add(written);
    }
  }

  /**
   * The oldest waiting requests none of whose chains a transaction is writing, up to the batch
   * size in events (a larger batch goes alone). A request left waiting holds back the later ones
   * of its chains, so each chain keeps arrival order.
   */
  private takeBatch(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    const held = new Set<string>();
    let events = 0;
    for (const waiting of this.waiting) {
      const fits = events === 0 || events + waiting.unit.events.length <= this.config.appendBatchSize;
      const free = fits && waiting.chains.every((chain) => !this.busyChains.has(chain) && !held.has(chain));
      if (free) {
        batch.push(waiting);
        events += waiting.unit.events.length;
      } else {
        rest.push(waiting);
        waiting.chains.forEach((chain) => held.add(chain));
      }
    }
    this.waiting = rest;
    for (const taken of batch) {
      this.waitingEvents -= taken.unit.events.length;
      this.waitingBytes -= taken.bytes;
    }
    return batch;
  }

  private async write(batch: Waiting[]): Promise<void> {
    try {
      const started = performance.now();
      const results = await this.ledger.append(batch.map((w) => w.unit));
      let appended = 0;
      batch.forEach((w, i) => {
        const result = results[i]!;
        if (result instanceof AppError) return w.reject(result);
        if (!(result instanceof Replay)) appended += result.events.length;
        w.resolve(result);
      });
      this.metrics.appendCommitted(appended, (performance.now() - started) / 1000);
    } catch (error) {
      if (
        error instanceof StaleSchemas &&
        batch.some((w) => w.unit.events.some((e) => error.accounts.has(e.accountId)))
      ) {
        // Only the units with events of accounts whose schemas changed go back to be checked again
        // (EventsService); the rest are written now, in a transaction of their own.
        const stale = batch.filter((w) => w.unit.events.some((e) => error.accounts.has(e.accountId)));
        stale.forEach((w) => w.reject(error));
        const rest = batch.filter((w) => !stale.includes(w));
        if (rest.length > 0) await this.write(rest);
        return;
      }
      if (batch.length > 1 && isDataError(error)) {
        // What the database refused must not fail its neighbours: write each request (a batch as a whole) alone.
        for (const single of batch) await this.write([single]);
        return;
      }
      const events = batch.reduce((n, w) => n + w.unit.events.length, 0);
      this.logger.warn(`A batch of ${events} event(s) was not written: ${errorSummary(error)}`);
      const refusal = foreignTreeNode(error) ?? error;
      batch.forEach((w) => w.reject(refusal));
    }
  }
}

/**
 * What a waiting event weighs: the UTF-8 bytes of its text fields and of its context as JSON.
 * The objects themselves take a few times that in memory; the limit is set with that in mind.
 */
export function appendRequestBytes(request: AppendRequest): number {
  const { chainName, actor, action, resource, context } = request;
  return (
    Buffer.byteLength(chainName) +
    Buffer.byteLength(actor) +
    Buffer.byteLength(action) +
    (resource === null ? 0 : Buffer.byteLength(resource)) +
    (context === null ? 0 : Buffer.byteLength(JSON.stringify(context)))
  );
}

/**
 * An append whose chain's tree already holds a node it completes: a row written beyond the head by
 * someone else (the service stores a node once, when complete, and merkle_nodes refuses changes).
 * It cannot be overwritten and must not be trusted, so the chain takes no events until an operator
 * removes it (whole-chain verification reports it): a clear 500 naming the chain and the node,
 * logged by the exception filter, instead of an anonymous one.
 */
function foreignTreeNode(error: unknown): AppError | null {
  const { constraint, detail } = (error ?? {}) as { constraint?: unknown; detail?: unknown };
  if (sqlState(error) !== '23505' || constraint !== 'pk_merkle_nodes') return null;
  const [, stored, level = '?', index = '?'] =
    /\(chain_id, level, "?index"?\)=\(([0-9a-f-]{36}), (\d+), (\d+)\)/.exec(typeof detail === 'string' ? detail : '') ??
    [];
  // The key as PostgreSQL reports it: the chain's id as stored (a uuid, migration 1765900000000).
  const chainId = stored === undefined ? '?' : uuidToUlid('chn', stored);
  return new AppError(
    'INTERNAL_ERROR',
    `Chain ${chainId} cannot grow: its stored Merkle tree already holds node (${level}, ${index}) beyond the chain head, which this service did not write. Nothing was appended; GET /v1/chain/${chainId}/verify reports it, and the row must be removed by an operator.`,
    { chainId, level: Number(level), index: Number(index) },
  );
}

function queueFull(): AppError {
  return AppError.unavailable('Too many events are waiting to be written; retry shortly.', 1);
}

function chainOf(request: AppendRequest): string {
  return `${request.accountId}/${request.chainName}`;
}

function errorSummary(error: unknown): string {
  return error instanceof Error ? `${sqlState(error) || error.name}: ${error.message}` : String(error);
}
