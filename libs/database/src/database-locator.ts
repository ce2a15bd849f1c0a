import { Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { DataSource } from 'typeorm';
import { AppConfig } from '@app/common';
import { ConnectionSettings } from './data-source-options';
import { EmbeddedPostgres } from './embedded-postgres';

/**
 * Where the database is: DATABASE_URL, or the embedded PostgreSQL started here on DATA_DIR.
 * Owns the embedded server's lifetime, stopping it after the data source has closed.
 */
@Injectable()
export class DatabaseLocator implements OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  private embedded: EmbeddedPostgres | null = null;
  settings!: ConnectionSettings;

  constructor(
    private readonly config: AppConfig,
    private readonly moduleRef: ModuleRef,
  ) {}

  /** True on the embedded database (no DATABASE_URL): one connection, and DATA_DIR holds its files. */
  get embeddedDatabase(): boolean {
    return !this.config.databaseUrl;
  }

  async open(): Promise<ConnectionSettings> {
    if (this.config.databaseUrl) {
      this.settings = { url: this.config.databaseUrl, poolSize: this.config.databasePoolSize };
    } else {
      this.embedded = await EmbeddedPostgres.start(this.config.dataDir, (message) => this.logger.warn(message));
      this.logger.log(
        `No DATABASE_URL: using the embedded PostgreSQL (PGlite) in ${this.config.dataDir}, on the Unix socket in ${this.embedded.socketDir} (no TCP port)`,
      );
      this.settings = { url: this.embedded.url, poolSize: 1 };
    }
    return this.settings;
  }

  async onApplicationShutdown(): Promise<void> {
    if (!this.embedded) return;
    const dataSource = this.moduleRef.get(DataSource, { strict: false });
    if (dataSource.isInitialized) await dataSource.destroy();
    await this.embedded.stop();
    this.embedded = null;
  }
}
