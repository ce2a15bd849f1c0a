import { Injectable } from '@nestjs/common';
import { AppConfig, AppError } from '@app/common';
import { Db, QUERY_CANCELED, ReadReplica, sqlState } from '@app/database';
import { AccountSlots, Slot } from '../common/account-slots';

/** Seconds a refused read is told to wait: the reads ahead of it end within QUERY_TIMEOUT_SECONDS, most in milliseconds. */
const RETRY_AFTER_SECONDS = 1;

/**
 * Reads that run SQL over many events (the list and search, statistics, the export): no tenant
 * starves another (docs/contract.md §8). An account has at most READS_PER_ACCOUNT of them in flight on
 * this instance, beyond which the answer is 429 at once (so one account holds at most that many
 * pool connections, whatever its clients do), and each statement runs under a statement_timeout
 * of QUERY_TIMEOUT_SECONDS in PostgreSQL: past it, the database cancels it and the answer is
 * 422 QUERY_TOO_EXPENSIVE. The live tail is not counted here: its streams are limited by
 * STREAMS_PER_ACCOUNT and its polls read only what committed since the last one.
 */
@Injectable()
export class BoundedReads {
  private readonly slots: AccountSlots;

  constructor(
    private readonly config: AppConfig,
    private readonly reads: ReadReplica,
  ) {
    this.slots = new AccountSlots(
      () => ({ perAccount: config.readsPerAccount }),
      (_scope, inFlight, limit) =>
        new AppError(
          'RATE_LIMITED',
          `This account already has ${inFlight} read(s) over its events in flight; retry when one has finished.`,
          { limit },
          { 'Retry-After': String(RETRY_AFTER_SECONDS) },
        ),
    );
  }

  /** The statement timeout, in milliseconds. */
  get timeoutMs(): number {
    return this.config.queryTimeoutSeconds * 1000;
  }

  /** Reads of `accountId` in flight now. */
  inFlightOf(accountId: string): number {
    return this.slots.inFlightOf(accountId);
  }

  /**
   * `work` in a read-only transaction under the timeout, holding one of the account's slots (429
   * when none is left); on DATABASE_READ_URL's replica while it is within READ_REPLICA_MAX_LAG_MS
   * (ReadReplica, docs/contract.md §21), else on the primary.
   */
  run<T>(accountId: string, work: (db: Db) => Promise<T>): Promise<T> {
    return this.slots.run(accountId, async () => {
      try {
        return await this.reads.runBounded(this.timeoutMs, work);
      } catch (error) {
        throw this.translated(error);
      }
    });
  }

  /** Throws the 429 `run` and `take` would, without taking a slot (ReadAdmission, before validation). */
  refuseIfFull(accountId: string): void {
    this.slots.refuseIfFull(accountId);
  }

  /** A slot for a read that outlives one call (an export, until its stream closes); 429 when none is left. */
  take(accountId: string): Slot {
    return this.slots.take(accountId);
  }

  /** A statement cancelled by its timeout as 422 QUERY_TOO_EXPENSIVE; anything else as it is. */
  translated(error: unknown): unknown {
    if (sqlState(error) !== QUERY_CANCELED) return error;
    const timeoutSeconds = this.config.queryTimeoutSeconds;
    return new AppError(
      'QUERY_TOO_EXPENSIVE',
      `The query ran longer than ${timeoutSeconds} s and was cancelled; narrow the period, add filters or simplify q.`,
      { timeoutSeconds },
    );
  }
}
