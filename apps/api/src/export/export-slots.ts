import { Injectable } from '@nestjs/common';
import { AppConfig, AppError } from '@app/common';
import { AccountSlots, Slot } from '../common/account-slots';

/** Seconds a refused export is told to wait: exports take seconds, a stalled one is cut after its timeout. */
const RETRY_AFTER_SECONDS = 5;

/** One export in flight; `release()` may be called any number of times, the first one counts. */
export type ExportSlot = Slot;

/**
 * Exports in flight on this instance, by account. On PostgreSQL each holds a pool connection (its
 * snapshot) for as long as its client reads, so an account runs at most EXPORTS_PER_ACCOUNT and
 * the instance EXPORTS_PER_INSTANCE (default half the pool) at once; more are 429 RATE_LIMITED
 * with Retry-After. The limits are read at every request, so a test may change them.
 */
@Injectable()
export class ExportSlots {
  private readonly slots: AccountSlots;

  constructor(config: AppConfig) {
    this.slots = new AccountSlots(
      () => ({ perAccount: config.exportsPerAccount, perInstance: config.exportsPerInstance }),
      (scope, inFlight, limit) =>
        new AppError(
          'RATE_LIMITED',
          `${scope === 'account' ? 'This account' : 'The service'} already has ${inFlight} export(s) in flight; retry when one has finished.`,
          { limit },
          { 'Retry-After': String(RETRY_AFTER_SECONDS) },
        ),
    );
  }

  /** Exports in flight now, all accounts together. */
  get inFlight(): number {
    return this.slots.inFlight;
  }

  /** Resolves once no export is in flight (e.g. for a shutdown that lets exports finish). */
  whenIdle(): Promise<void> {
    return this.slots.whenIdle();
  }

  /** A slot for an export of `accountId`, or 429 when the account or the instance has none left. */
  take(accountId: string): ExportSlot {
    return this.slots.take(accountId);
  }
}
