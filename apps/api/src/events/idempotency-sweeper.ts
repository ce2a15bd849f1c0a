import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { IdempotencyKeysRepository } from '@app/database';

const SWEEP_EVERY_MS = 60 * 60 * 1000;
/** Rows per DELETE: short statements, so appends that claim keys never wait long. */
const BATCH = 5000;

/**
 * Deletes Idempotency-Key records IDEMPOTENCY_RETENTION_HOURS after their claim (docs/contract.md §7:
 * kept at least 24 hours), once at start and then hourly, so the table holds about one retention
 * period of keys instead of growing forever. Several instances may sweep at once: a row is
 * deleted once, whoever gets there first.
 */
@Injectable()
export class IdempotencySweeper implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Idempotency');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly config: AppConfig,
  ) {}

  onApplicationBootstrap(): void {
    const tick = () => {
      this.running ??= this.sweep()
        .catch((error: unknown) =>
          this.logger.warn(
            `Idempotency-Key sweep failed, next try in an hour: ${error instanceof Error ? error.message : String(error)}`,
          ),
        )
        .finally(() => (this.running = null));
    };
    tick();
    this.timer = setInterval(tick, SWEEP_EVERY_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** Deletes every record claimed more than the retention ago; resolves to how many. */
  async sweep(): Promise<number> {
    let deleted = 0;
    for (;;) {
      const affected = await this.keys.deleteClaimedBefore(this.config.idempotencyRetentionHours, BATCH);
      deleted += affected;
      if (affected < BATCH) break;
    }
    if (deleted > 0)
      this.logger.log(
        `Deleted ${deleted} Idempotency-Key record(s) older than ${this.config.idempotencyRetentionHours} h`,
      );
    return deleted;
  }
}
