import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ulid } from 'ulid';
import { AppConfig, BootstrapKey } from '@app/common';
import { AccountsRepository, ApiKeysRepository, Db, TransactionRunner } from '@app/database';
import { apiKeyPrefix, digestApiKey, generateApiKey } from './api-key';
import { ApiKeyStore } from './api-key.store';

/**
 * API_KEYS is followed at every start (contract §1, issue 18 item 12), in one transaction: each
 * entry's account exists and its key is registered (hashed) as a `config` key with exactly the
 * listed scopes; a `config` key no longer listed is revoked. Keys made by the CLI or the API are
 * never touched. Instances sharing a database must share API_KEYS. On the embedded database with
 * no API_KEYS (a developer's first `npm start`), it makes one development key, kept in DATA_DIR so
 * it survives restarts, and prints it once at start: it is the one configured key then.
 */
@Injectable()
export class KeyBootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Keys');

  constructor(
    private readonly config: AppConfig,
    private readonly transactions: TransactionRunner,
    private readonly accounts: AccountsRepository,
    private readonly apiKeys: ApiKeysRepository,
    private readonly store: ApiKeyStore,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const configured =
      this.config.bootstrapKeys.length > 0 || this.config.databaseUrl !== null
        ? this.config.bootstrapKeys
        : [this.developmentKey()];
    let revoked: string[];
    try {
      revoked = await this.transactions.run(async (tx) => {
        for (const entry of configured) await this.register(entry, tx);
        return this.apiKeys.revokeConfiguredExcept(
          configured.map((entry) => digestApiKey(entry.key)),
          tx,
        );
      });
    } catch (error) {
      throw new Error(`API_KEYS: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (this.config.bootstrapKeys.length > 0)
      this.logger.log(`Registered ${this.config.bootstrapKeys.length} key(s) from API_KEYS`);
    if (revoked.length > 0)
      this.logger.warn(`Revoked ${revoked.length} key(s) no longer in API_KEYS: ${revoked.join(', ')}`);
    await this.store.preload();
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

  /** Race-safe, so several instances may start with the same API_KEYS. */
  private async register(entry: BootstrapKey, tx: Db): Promise<void> {
    const accountId = await this.accounts.ensureByName(entry.account, `acc_${ulid()}`, tx);
    const row = await this.apiKeys.upsertConfigured(
      {
        id: `key_${ulid()}`,
        accountId,
        name: 'API_KEYS',
        prefix: apiKeyPrefix(entry.key),
        keyDigest: digestApiKey(entry.key),
        scopes: entry.scopes,
        origin: 'config',
        expiresAt: null,
      },
      tx,
    );
    if (row.accountId !== accountId)
      throw new Error(`the key given for account '${entry.account}' is already registered to another account`);
  }
}
