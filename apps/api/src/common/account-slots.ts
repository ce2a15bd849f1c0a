import { AppError } from '@app/common';

/** One unit of work in flight; `release()` may be called any number of times, the first one counts. */
export interface Slot {
  release(): void;
}

/** How much may be in flight: per account, and (optionally) for the whole instance. */
export interface SlotLimits {
  perAccount: number;
  perInstance?: number;
}

/** Builds the refusal: whose limit was reached, how much is in flight, the limit. */
export type Refusal = (scope: 'account' | 'instance', inFlight: number, limit: number) => AppError;

/**
 * Work in flight on this instance, counted by account: the one mechanism behind every "at most N
 * at once per account" of the API (exports, reads over many events, whole-chain verifications).
 * Beyond a limit `take` throws the refusal (a 429) at once: nothing waits in a queue, so a busy
 * account's requests cannot pile up in memory or in the pool's queue ahead of other accounts'.
 * The limits are read at every `take`, so a test may change them.
 */
export class AccountSlots {
  private readonly byAccount = new Map<string, number>();
  private total = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    private readonly limits: () => SlotLimits,
    private readonly refuse: Refusal,
  ) {}

  /** In flight now, all accounts together. */
  get inFlight(): number {
    return this.total;
  }

  /** In flight now for one account. */
  inFlightOf(accountId: string): number {
    return this.byAccount.get(accountId) ?? 0;
  }

  /** Resolves once nothing is in flight. */
  whenIdle(): Promise<void> {
    return this.total === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Throws the refusal `take` would throw now, taking nothing. */
  refuseIfFull(accountId: string): void {
    const mine = this.inFlightOf(accountId);
    const { perAccount, perInstance } = this.limits();
    if (mine >= perAccount) throw this.refuse('account', mine, perAccount);
    if (perInstance !== undefined && this.total >= perInstance) throw this.refuse('instance', this.total, perInstance);
  }

  /** A slot for `accountId`, or the refusal when the account or the instance has none left. */
  take(accountId: string): Slot {
    this.refuseIfFull(accountId);
    const mine = this.inFlightOf(accountId);
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

  /** `work` holding a slot of `accountId` (the refusal when there is none), given back however it ends. */
  async run<T>(accountId: string, work: () => Promise<T>): Promise<T> {
    const slot = this.take(accountId);
    try {
      return await work();
    } finally {
      slot.release();
    }
  }

  private give(accountId: string): void {
    const left = this.inFlightOf(accountId) - 1;
    if (left <= 0) this.byAccount.delete(accountId);
    else this.byAccount.set(accountId, left);
    this.total--;
    if (this.total > 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
