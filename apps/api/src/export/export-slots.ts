import { Injectable } from '@nestjs/common';
import { AppConfig, AppError } from '@app/common';

/** Seconds a refused export is told to wait: exports take seconds, a stalled one is cut after its timeout. */
const RETRY_AFTER_SECONDS = 5;

/** One export in flight; `release()` may be called any number of times, the first one counts. */
export interface ExportSlot {
  release(): void;
}

/**
 * Exports in flight on this instance, by account. On PostgreSQL each holds a pool connection (its
 * snapshot) for as long as its client reads, so an account runs at most EXPORTS_PER_ACCOUNT and
 * the instance EXPORTS_PER_INSTANCE (default half the pool) at once; more are 429 RATE_LIMITED
 * with Retry-After. The limits are read at every request, so a test may change them.
 */
@Injectable()
export class ExportSlots {
  private readonly byAccount = new Map<string, number>();
  private total = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(private readonly config: AppConfig) {}

  /** Exports in flight now, all accounts together. */
  get inFlight(): number {
    return this.total;
  }

  /** Resolves once no export is in flight (e.g. for a shutdown that lets exports finish). */
  whenIdle(): Promise<void> {
    return this.total === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** A slot for an export of `accountId`, or 429 when the account or the instance has none left. */
  take(accountId: string): ExportSlot {
    const mine = this.byAccount.get(accountId) ?? 0;
    const { exportsPerAccount, exportsPerInstance } = this.config;
    if (mine >= exportsPerAccount) {
      throw this.refused(`This account already has ${mine} export(s) in flight`, exportsPerAccount);
    }
    if (this.total >= exportsPerInstance) {
      throw this.refused(`The service already has ${this.total} export(s) in flight`, exportsPerInstance);
    }
    this.byAccount.set(accountId, mine + 1);
    this.total++;
    let released = false;
    return {
      release: () => {
        if (released) return;
        released = true;
        this.give(accountId);
      },
    };
  }

  private give(accountId: string): void {
    const left = (this.byAccount.get(accountId) ?? 1) - 1;
    if (left === 0) this.byAccount.delete(accountId);
    else this.byAccount.set(accountId, left);
    this.total--;
    if (this.total > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }

  private refused(what: string, limit: number): AppError {
    return new AppError(
      'RATE_LIMITED',
      `${what}; retry when one has finished.`,
      { limit },
      { 'Retry-After': String(RETRY_AFTER_SECONDS) },
    );
  }
}
