import { Injectable, Module } from '@nestjs/common';

/**
 * Erasures committed on this instance, told in process to whoever keeps copies of events (the streams'
 * shared page reads): ErasureService calls `erased` after the commit, before it answers. Its own module,
 * which depends on nothing, so the erasure and streams modules both depend on it, not on each other.
 * Other instances are not told: what they keep is bounded by time (docs/contract.md §17).
 */
@Injectable()
export class ErasureNotices {
  private readonly listeners = new Set<(accountId: string) => void>();

  /** Calls `listener` with the account of every erasure committed on this instance from now on. */
  listen(listener: (accountId: string) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** An erasure of `accountId`'s events committed. */
  erased(accountId: string): void {
    for (const listener of this.listeners) listener(accountId);
  }
}

@Module({ providers: [ErasureNotices], exports: [ErasureNotices] })
export class ErasureNoticesModule {}
