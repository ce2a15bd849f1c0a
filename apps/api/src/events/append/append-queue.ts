import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { AppConfig, AppError } from '@app/common';
import { DatabaseLocator, isDataError, sqlState } from '@app/database';
import { Appended, AppendRequest } from './append-request';
import { ChainLedger } from './chain-ledger';

interface Waiting {
  request: AppendRequest;
  bytes: number;
  resolve: (appended: Appended) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit. Up to APPEND_CONCURRENCY transactions are in flight at once, each carrying every
 * waiting event whose chain is not already being written by another one; events of a busy chain
 * wait and go together in that chain's next transaction. So one hot chain gets one lock round,
 * one insert and one commit for many events, quiet chains share transactions, and no two of our
 * transactions ever queue on the same chain lock. Per chain, events are written in arrival
 * order. A request settles only after its transaction committed (or failed), so a 2xx means
 * committed. The queue is bounded, in events (APPEND_QUEUE_LIMIT) and in bytes
 * (APPEND_QUEUE_LIMIT_BYTES, contract §8): when full, callers get 503 + Retry-After. The ledger's
 * transaction is retried after a serialization failure or deadlock by the TransactionRunner.
 */
@Injectable()
export class AppendQueue implements BeforeApplicationShutdown {
  private readonly logger = new Logger('AppendQueue');
  private waiting: Waiting[] = [];
  /** appendRequestBytes of everything waiting. */
  private waitingBytes = 0;
  /** Chains (account + name) that an in-flight transaction is writing. */
  private readonly busyChains = new Set<string>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly maxInFlight: number;

  constructor(
    private readonly ledger: ChainLedger,
    private readonly config: AppConfig,
    database: DatabaseLocator,
  ) {
    // Leave connections for reads; the embedded database has only one anyway.
    this.maxInFlight = Math.max(1, Math.min(config.appendConcurrency, database.settings.poolSize - 1));
  }

  append(request: AppendRequest): Promise<Appended> {
    const bytes = appendRequestBytes(request);
    if (
      this.waiting.length >= this.config.appendQueueLimit ||
      this.waitingBytes + bytes > this.config.appendQueueLimitBytes
    ) {
      return Promise.reject(AppError.unavailable('Too many events are waiting to be written; retry shortly.', 1));
    }
    return new Promise<Appended>((resolve, reject) => {
      this.waiting.push({ request, bytes, resolve, reject });
      this.waitingBytes += bytes;
      // After every pump, whatever still waits belongs to a busy chain or has no free slot; an
      // event of a busy chain can start nothing, so it skips the scan (a hot chain stays O(1)).
      if (!this.busyChains.has(chainOf(request))) this.pump();
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all(this.inFlight);
  }

  private pump(): void {
    while (this.inFlight.size < this.maxInFlight) {
      const batch = this.takeBatch();
      if (batch.length === 0) return;
      const chains = new Set(batch.map(({ request }) => chainOf(request)));
      chains.forEach((chain) => this.busyChains.add(chain));
      const written: Promise<void> = this.write(batch).finally(() => {
        chains.forEach((chain) => this.busyChains.delete(chain));
        this.inFlight.delete(written);
        this.pump();
      });
      this.inFlight.add(written);
    }
  }

  /** The oldest waiting events of chains no transaction is writing, up to the batch size. */
  private takeBatch(): Waiting[] {
    const batch: Waiting[] = [];
    const rest: Waiting[] = [];
    for (const waiting of this.waiting) {
      const free = batch.length < this.config.appendBatchSize && !this.busyChains.has(chainOf(waiting.request));
      (free ? batch : rest).push(waiting);
    }
    this.waiting = rest;
    for (const taken of batch) this.waitingBytes -= taken.bytes;
    return batch;
  }

  private async write(batch: Waiting[]): Promise<void> {
    try {
      const results = await this.ledger.append(batch.map((w) => w.request));
      batch.forEach((w, i) => {
        const result = results[i]!;
        if (result instanceof AppError) w.reject(result);
        else w.resolve(result);
      });
    } catch (error) {
      if (batch.length > 1 && isDataError(error)) {
        // One event the database refused must not fail its neighbours: write them one by one.
        for (const single of batch) await this.write([single]);
        return;
      }
      this.logger.warn(`A batch of ${batch.length} event(s) was not written: ${errorSummary(error)}`);
      batch.forEach((w) => w.reject(error));
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

function chainOf(request: AppendRequest): string {
  return `${request.accountId}/${request.chainName}`;
}

function errorSummary(error: unknown): string {
  return error instanceof Error ? `${sqlState(error) || error.name}: ${error.message}` : String(error);
}
