import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { ApiKeysRepository } from '@app/database';

/** `lastUsedAt` is written at most this often per key (contract §12). */
export const LAST_USED_INTERVAL_MS = 60_000;
/** Uses are written this long after the first one noted, in one statement for every key. */
const FLUSH_DELAY_MS = 1_000;
/** Keys whose last write is remembered; beyond, the memory starts over (the statement still skips recent ones). */
const REMEMBERED_MAX = 100_000;

/**
 * Records `lastUsedAt` off the request's critical path: a request only compares a time in a Map
 * (the hot path's whole cost); a key due for a write (none in the last minute) is queued, and one
 * UPDATE a second later writes every queued key, skipping any written less than a minute ago by
 * another instance. A failed write is logged and dropped: the next use queues the key again.
 */
@Injectable()
export class KeyUsage implements OnApplicationShutdown {
  private readonly logger = new Logger('Keys');
  private readonly lastWritten = new Map<string, number>();
  private readonly due = new Set<string>();
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly apiKeys: ApiKeysRepository) {}

  noteUse(keyId: string, now = Date.now()): void {
    const last = this.lastWritten.get(keyId);
    if (last !== undefined && now - last < LAST_USED_INTERVAL_MS) return;
    if (this.lastWritten.size >= REMEMBERED_MAX) this.lastWritten.clear();
    this.lastWritten.set(keyId, now);
    this.due.add(keyId);
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_DELAY_MS).unref();
  }

  /** Writes every queued use now. */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.due.size === 0) return;
    const ids = [...this.due];
    this.due.clear();
    try {
      await this.apiKeys.touch(ids);
    } catch (error) {
      for (const id of ids) this.lastWritten.delete(id);
      this.logger.warn(
        `lastUsedAt of ${ids.length} key(s) not written: ${error instanceof Error ? error.message : error}`,
      );
    }
  }

  async onApplicationShutdown(): Promise<void> {
    await this.flush();
  }
}
