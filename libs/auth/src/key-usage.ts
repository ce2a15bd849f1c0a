import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { ApiKeysRepository } from '@app/database';

/** `lastUsedAt` is written at most this often per key (docs/contract.md §12). */
export const LAST_USED_INTERVAL_MS = 60_000;
/** Uses are written this long after the first one noted, in one statement for every key. */
const FLUSH_DELAY_MS = 1_000;
/** Keys whose last write is remembered; beyond, the memory starts over (the statement still skips recent ones). */
const REMEMBERED_MAX = 100_000;

/**
 * Records `lastUsedAt` off the request's critical path: a request only adds its key's id to a Set
 * (the hot path's whole cost: no clock, no I/O). A second later one flush takes the keys not written
 * in the last minute and writes them in one UPDATE, which also skips any key another instance
 * wrote less than a minute ago. A failed write is logged and dropped: the next use queues the key again.
 */
@Injectable()
export class KeyUsage implements OnApplicationShutdown {
  private readonly logger = new Logger('Keys');
  private readonly lastWritten = new Map<string, number>();
  private readonly used = new Set<string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly apiKeys: ApiKeysRepository) {}

  noteUse(keyId: string): void {
    this.used.add(keyId);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS).unref();
  }

  /** Writes the uses noted since the last flush, of the keys not written in the last minute. */
  async flush(now = Date.now()): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const due = [...this.used].filter((id) => now - (this.lastWritten.get(id) ?? -Infinity) >= LAST_USED_INTERVAL_MS);
    this.used.clear();
    if (due.length === 0) return;
    if (this.lastWritten.size + due.length > REMEMBERED_MAX) this.lastWritten.clear();
    for (const id of due) this.lastWritten.set(id, now);
    try {
      await this.apiKeys.touch(due);
    } catch (error) {
      for (const id of due) this.lastWritten.delete(id);
      this.logger.warn(
        `lastUsedAt of ${due.length} key(s) not written: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.flush();
  }
}
