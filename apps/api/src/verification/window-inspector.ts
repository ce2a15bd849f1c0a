import { join } from 'node:path';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import Piscina from 'piscina';
import { AppConfig, Metrics } from '@app/common';
import { VerificationWindowReader } from '@app/database';
import { inspectWindow, WindowReport, WindowRequest, WindowRows } from '@app/verification';
import type { FloorWindow, WindowOutcome, WindowWorkerData } from './chain-window.worker';

/** Windows one worker reads at once: one is hashed while the database produces the next. */
const WINDOWS_PER_WORKER = 2;

/**
 * Reads and hashes windows of whole-chain verification. On PostgreSQL, VERIFY_WORKERS worker
 * threads (piscina) do it on their own connections, so verification uses every core instead of
 * the event loop's one, and the event loop stays free for other requests. The embedded database
 * serves one connection, so there (or with VERIFY_WORKERS=0) windows are read on the service's
 * pool and hashed in-process. Both run the same inspectWindow. With DATABASE_READ_URL, the workers
 * read a window whose `floor` is given on the replica once it has replayed that far (the worker).
 */
@Injectable()
export class WindowInspector implements OnApplicationShutdown {
  private readonly logger = new Logger('Verification');
  private readonly pool: Piscina<FloorWindow, WindowOutcome> | null;
  /** How many windows one verification keeps in flight. */
  readonly windowsInFlight: number;
  /** In-process: the window's reads on the service's pool. */
  private readonly rows: WindowRows;
  private readonly replicaConfigured: boolean;

  constructor(
    config: AppConfig,
    reader: VerificationWindowReader,
    private readonly metrics: Metrics,
  ) {
    this.rows = reader.reads;
    this.replicaConfigured = config.databaseReadUrl !== null;
    const workers = config.databaseUrl ? config.verifyWorkers : 0;
    this.pool =
      workers > 0
        ? createPool(
            { url: config.databaseUrl!, readUrl: config.databaseReadUrl, maxLagMs: config.readReplicaMaxLagMs },
            workers,
          )
        : null;
    // In-process: one window hashed while two are read (they queue for the pool's connections).
    this.windowsInFlight = workers > 0 ? workers * WINDOWS_PER_WORKER : 3;
    this.logger.log(
      workers > 0
        ? `Whole-chain verification hashes on ${workers} worker thread(s)`
        : 'Whole-chain verification hashes in-process',
    );
  }

  /** Whether windows can be read on the replica (worker threads with DATABASE_READ_URL): then a floor is worth taking. */
  get readsReplica(): boolean {
    return this.pool !== null && this.replicaConfigured;
  }

  /** `floor`: the primary's WAL position the window must be read at or past, to be read on the replica (null: the primary). */
  async inspect(request: WindowRequest, floor: string | null = null): Promise<WindowReport> {
    if (!this.pool) return inspectWindow(this.rows, request);
    const outcome = await this.pool.run({ ...request, floor });
    if ('report' in outcome) {
      if (this.replicaConfigured) this.metrics.readServed(outcome.side);
      return outcome.report;
    }
    // Rebuilt with its SQLSTATE or socket code, so that the exception filter can tell an
    // unreachable database (503) from anything else (500).
    throw Object.assign(new Error(`whole-chain verification worker: ${outcome.failure.message}`), {
      code: outcome.failure.code ?? undefined,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.pool?.destroy();
  }
}

function createPool(workerData: WindowWorkerData, workers: number): Piscina<FloorWindow, WindowOutcome> {
  // Built, the worker is the .js beside this file; under ts-jest it is the .ts, compiled on load.
  const compiled = __filename.endsWith('.js');
  return new Piscina({
    filename: join(__dirname, `chain-window.worker.${compiled ? 'js' : 'ts'}`),
    execArgv: compiled ? [] : ['-r', 'ts-node/register/transpile-only', '-r', 'tsconfig-paths/register'],
    minThreads: 0,
    maxThreads: workers,
    concurrentTasksPerWorker: WINDOWS_PER_WORKER,
    idleTimeout: 60_000,
    workerData,
  });
}
