import type { Server } from 'node:http';
import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { AppConfig } from '@app/common';
import { HttpDrain } from './http-drain';

/** What closing the pools (database, verification workers, embedded server) is given at the end. */
const CLOSING_MS = 1000;

/**
 * Graceful shutdown (docs/contract.md §11). main.ts's enableShutdownHooks runs Nest's hooks on SIGTERM
 * or SIGINT, in this order:
 * 1. onModuleDestroy (this one, the only one in the app): readiness answers 503 from now on, no
 *    new connection is accepted, and every request received is answered (HttpDrain), so every
 *    append received is committed or refused before anything closes. Whatever is still open
 *    SHUTDOWN_TIMEOUT_SECONDS − 1 s after the signal (an export still streaming) is cut.
 * 2. beforeApplicationShutdown: the AppendQueue's last transactions (none normally: each belongs to a
 *    request that was answered in 1).
 * 3. The HTTP server is closed, then onApplicationShutdown closes the pools: TypeORM's DataSource,
 *    the verification worker threads and their connections, the embedded database's socket server.
 * 4. The process exits 0. Should closing hang, it exits 1 at SHUTDOWN_TIMEOUT_SECONDS.
 */
@Injectable()
export class ShutdownService implements OnApplicationBootstrap, OnModuleDestroy, BeforeApplicationShutdown {
  private readonly logger = new Logger('Shutdown');
  private drain: HttpDrain | null = null;
  /** When the stop must be over (ms since the epoch); null while running. */
  private deadline: number | null = null;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly config: AppConfig,
  ) {}

  /** True from the first moment of a stop: readiness answers 503. */
  get stopping(): boolean {
    return this.deadline !== null;
  }

  onApplicationBootstrap(): void {
    // Created with the app, before it listens: every connection is seen.
    const server = this.adapterHost.httpAdapter?.getHttpServer() as Server | undefined;
    if (server) this.drain = new HttpDrain(server);
  }

  async onModuleDestroy(): Promise<void> {
    const timeout = this.config.shutdownTimeoutSeconds * 1000;
    this.deadline = Date.now() + timeout;
    if (!this.drain) return;
    this.logger.log(
      `Stopping: no new connections; answering ${this.drain.inFlight} request(s) in flight (at most ${this.config.shutdownTimeoutSeconds - 1} s)`,
    );
    const cut = await this.drain.stop(timeout - CLOSING_MS);
    if (cut > 0) this.logger.warn(`Cut ${cut} connection(s) still open at the shutdown timeout`);
  }

  beforeApplicationShutdown(signal?: string): void {
    // Only for a signal: app.close() (tests) leaves the process alone.
    if (!signal || this.deadline === null) return;
    setTimeout(() => {
      this.logger.error(`Closing took longer than SHUTDOWN_TIMEOUT_SECONDS (${this.config.shutdownTimeoutSeconds} s)`);
      process.exit(1);
    }, this.deadline - Date.now()).unref();
  }
}
