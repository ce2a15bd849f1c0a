import { join } from 'node:path';
import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import Piscina from 'piscina';
import { AppConfig } from '@app/common';
import { VerificationWindowReader } from '@app/database';
import { inspectWindow, WindowReport, WindowRequest, WindowRows } from '@app/verification';
import type { WindowOutcome, WindowWorkerData } from './chain-window.worker';

/** Windows one worker reads at once: one is hashed while the database produces the next. */
const WINDOWS_PER_WORKER = 2;

/**
 * Reads and hashes windows of whole-chain verification. On PostgreSQL, VERIFY_WORKERS worker
 * threads (piscina) do it on their own connections, so verification uses every core instead of
 * the event loop's one, and the event loop stays free for other requests. The embedded database
 * serves one connection, so there (or with VERIFY_WORKERS=0) windows are read on the service's
 * pool and hashed in-process. Both run the same inspectWindow.
 */
@Injectable()
export class WindowInspector implements OnApplicationShutdown {
  private readonly logger = new Logger('Verification');
  private readonly pool: Piscina<WindowRequest, WindowOutcome> | null;
  /** How many windows one verification keeps in flight. */
  readonly windowsInFlight: number;
  /** In-process: the window's reads on the service's pool. */
  private readonly rows: WindowRows;

  constructor(config: AppConfig, reader: VerificationWindowReader) {
    this.rows = reader.reads;
    const workers = config.databaseUrl ? config.verifyWorkers : 0;
    this.pool = workers > 0 ? createPool(config.databaseUrl!, workers) : null;
    // In-process: one window hashed while two are read (they queue for the pool's connections).
    this.windowsInFlight = workers > 0 ? workers * WINDOWS_PER_WORKER : 3;
    this.logger.log(
      workers > 0
        ? `Whole-chain verification hashes on ${workers} worker thread(s)`
        : 'Whole-chain verification hashes in-process',
    );
  }

  async inspect(request: WindowRequest): Promise<WindowReport> {
    if (!this.pool) return inspectWindow(this.rows, request);
    const outcome = await this.pool.run(request);
    if ('report' in outcome) return outcome.report;
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

function createPool(url: string, workers: number): Piscina<WindowRequest, WindowOutcome> {
  // Built, the worker is the .js beside this file; under ts-jest it is the .ts, compiled on load.
  const compiled = __filename.endsWith('.js');
  const workerData: WindowWorkerData = { url };
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
