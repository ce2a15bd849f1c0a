import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { DatabaseLocator, ErasureResidueRepository } from '@app/database';

/**
 * How long after an erasure its scrub starts: the erasures of a burst share one (on the embedded
 * database each scrub holds the one connection while it rewrites the tables), and the scrub still
 * ends well within the 60 s of docs/contract.md §17 (it took 1.3 s at 100,000 events: docs/erasure.md).
 */
export const SCRUB_DELAY_MS = 5000;

/** In DATA_DIR while an erasure's scrub is owed on the embedded database: a kill before it is made up at the next start. */
export const SCRUB_OWED_FILE = 'erasure-scrub-owed';

/**
 * Removes what an erasure leaves in the database's own files (docs/contract.md §17, "The embedded
 * default's files"): ErasureService calls afterErasure once its transaction has committed, and
 * SCRUB_DELAY_MS later (erasures meanwhile join in) the erased tables are
 * - on the embedded database, rewritten with the write-ahead log (ErasureResidueRepository.rewrite), so
 *   that a byte search of DATA_DIR finds no erased value and no removed salt seed; also at shutdown
 *   when one is owed, and at the next start after a kill (SCRUB_OWED_FILE);
 * - on PostgreSQL, vacuumed (plain VACUUM: appends go on); WAL archives, replicas and backups are
 *   the operator's (docs/erasure.md).
 * A failed scrub is logged; the next erasure, or the next start on the embedded database, tries again.
 */
@Injectable()
export class ErasureScrubber implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Erasure');
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  /** An erasure committed since the last scrub began. */
  private owed = false;
  private stopping = false;

  constructor(
    private readonly residue: ErasureResidueRepository,
    private readonly database: DatabaseLocator,
    private readonly config: AppConfig,
  ) {}

  private get owedFile(): string {
    return join(this.config.dataDir, SCRUB_OWED_FILE);
  }

  onApplicationBootstrap(): void {
    if (this.database.embeddedDatabase && existsSync(this.owedFile)) this.afterErasure();
  }

  /** After an erasure's transaction committed: schedules its scrub; never waits, never throws. */
  afterErasure(): void {
    this.owed = true;
    if (this.database.embeddedDatabase) {
      try {
        writeFileSync(this.owedFile, '', { mode: 0o600 });
      } catch (error) {
        this.logger.warn(`Could not note the erasure's scrub in ${this.owedFile}: ${messageOf(error)}`);
      }
    }
    this.schedule();
  }

  /** A scrub that is owed is done before the database closes (on the embedded one; on PostgreSQL autovacuum will). */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
    if (this.owed && this.database.embeddedDatabase) await this.scrub();
  }

  private schedule(): void {
    if (this.timer || this.running || this.stopping) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.scrub().finally(() => {
        this.running = null;
        if (this.owed) this.schedule();
      });
    }, SCRUB_DELAY_MS);
    this.timer.unref();
  }

  private async scrub(): Promise<void> {
    this.owed = false;
    const started = performance.now();
    const took = () => Math.round(performance.now() - started);
    try {
      if (this.database.embeddedDatabase) {
        const walSwitches = await this.residue.rewrite();
        if (!this.owed) rmSync(this.owedFile, { force: true });
        this.logger.log({
          msg: 'Erased values scrubbed from the embedded database’s files',
          milliseconds: took(),
          walSwitches,
        });
      } else {
        await this.residue.vacuum();
        this.logger.log({ msg: 'Erased tables vacuumed', milliseconds: took() });
      }
    } catch (error) {
      this.logger.error(`The scrub after an erasure failed (tried again after the next one): ${messageOf(error)}`);
    }
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
