import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { AppConfig, AppError } from '@app/common';
import { EventEntity } from '@app/database';
import { AppendRequest } from './append-request';
import { ChainLedger } from './chain-ledger';

type Appended = { event: EventEntity; chainName: string };

interface Waiting {
  request: AppendRequest;
  resolve: (appended: Appended) => void;
  reject: (error: unknown) => void;
}

/** Serialization failures and deadlocks: the transaction wrote nothing and may simply run again. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 4;

/**
 * Group commit. Requests that arrive while a transaction is in flight wait here and are written
 * together by the next one, in arrival order: one lock round, one insert, one commit for many
 * events. A request's promise settles only after its transaction committed (or failed), so a
 * 2xx still means committed. The queue is bounded: when full, callers get 503 + Retry-After.
 */
@Injectable()
export class AppendQueue implements BeforeApplicationShutdown {
  private readonly logger = new Logger('AppendQueue');
  private waiting: Waiting[] = [];
  private draining: Promise<void> | null = null;

  constructor(
    private readonly ledger: ChainLedger,
    private readonly config: AppConfig,
  ) {}

  append(request: AppendRequest): Promise<Appended> {
    if (this.waiting.length >= this.config.appendQueueLimit) {
      return Promise.reject(AppError.unavailable('Too many events are waiting to be written; retry shortly.', 1));
    }
    return new Promise<Appended>((resolve, reject) => {
      this.waiting.push({ request, resolve, reject });
      this.draining ??= this.drain();
    });
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.draining;
  }

  private async drain(): Promise<void> {
    // Let the requests that arrive in this turn of the event loop join the first batch.
    await new Promise((resolve) => setImmediate(resolve));
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, this.config.appendBatchSize);
      await this.write(batch);
    }
    this.draining = null;
  }

  private async write(batch: Waiting[]): Promise<void> {
    try {
      const appended = await this.appendWithRetry(batch.map((w) => w.request));
      batch.forEach((w, i) => w.resolve(appended[i]!));
    } catch (error) {
      if (batch.length > 1 && isDataError(error)) {
        // One event the database refused must not fail its neighbours: write them one by one.
        for (const single of batch) await this.write([single]);
        return;
      }
      this.logger.warn(`A batch of ${batch.length} event(s) was not written: ${describe(error)}`);
      batch.forEach((w) => w.reject(error));
    }
  }

  private async appendWithRetry(requests: AppendRequest[]): Promise<Appended[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.ledger.append(requests);
      } catch (error) {
        if (attempt >= MAX_ATTEMPTS || !RETRYABLE.has(sqlState(error))) throw error;
      }
    }
  }
}

function sqlState(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : '';
}

/** SQLSTATE classes 22 (data exception) and 23 (integrity violation): about the rows, not the database. */
function isDataError(error: unknown): boolean {
  return /^2[23]/.test(sqlState(error));
}

function describe(error: unknown): string {
  return error instanceof Error ? `${sqlState(error) || error.name}: ${error.message}` : String(error);
}
