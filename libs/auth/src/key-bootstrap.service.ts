import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { AppConfig, BootstrapKey } from '@app/common';
import { AccountsRepository, ApiKeysRepository, TransactionRunner } from '@app/database';
import { generateApiKey } from './api-key';
import { registerApiKey } from './key-registration';

/**
 * Makes sure each API_KEYS entry's account exists and its key is registered (hashed). On the
 * embedded database with no API_KEYS (a developer's first `npm start`), it makes one development
 * key, kept in DATA_DIR so it survives restarts, and prints it once at start.
 */
@Injectable()
export class KeyBootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Keys');

  constructor(
    private readonly config: AppConfig,
    private readonly transactions: TransactionRunner,
    private readonly accounts: AccountsRepository,
    private readonly apiKeys: ApiKeysRepository,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    for (const entry of this.config.bootstrapKeys) await this.register(entry);
    if (this.config.bootstrapKeys.length > 0) {
      this.logger.log(`Registered ${this.config.bootstrapKeys.length} key(s) from API_KEYS`);
    } else if (this.config.databaseUrl === null) {
      await this.register(this.developmentKey());
    }
  }

  private developmentKey(): BootstrapKey {
    const file = join(this.config.dataDir, 'dev-api-key');
    let key = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
    if (!key) {
      key = generateApiKey();
      mkdirSync(this.config.dataDir, { recursive: true });
      writeFileSync(file, `${key}\n`, { mode: 0o600 });
    }
    this.logger.warn(`Development key (account "dev", scopes ingest+read): ${key}`);
    this.logger.warn(`  kept in ${file}; set API_KEYS or use "npm run cli -- keys create" for real keys`);
    return { account: 'dev', key, scopes: ['ingest', 'read'] };
  }

  /** Idempotent, so several instances may start with the same API_KEYS. */
  async register(entry: BootstrapKey): Promise<{ accountId: string; keyId: string }> {
    try {
      return await this.transactions.run((tx) =>
        registerApiKey({ accounts: this.accounts, apiKeys: this.apiKeys }, entry, tx),
      );
    } catch (error) {
      throw new Error(`API_KEYS: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
}
