import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { ulid } from 'ulid';
import { AppConfig, BootstrapKey, SYSTEM_ACCOUNT } from '@app/common';
import { AccountsRepository, ApiKeysRepository, Db, TransactionRunner } from '@app/database';
import { apiKeyPrefix, digestApiKey, generateApiKey } from './api-key';
import { ApiKeyStore } from './api-key.store';

/**
 * API_KEYS is followed at every start (docs/contract.md §1, issue 18 item 12), in one transaction: each
 * entry's account exists and its key is registered (hashed) as a `config` key with exactly the
 * listed scopes; a `config` key no longer listed is revoked. Keys made by the CLI or the API are
 * never touched. Instances sharing a database must share API_KEYS. On the embedded database with
 * no API_KEYS (a developer's first `npm start`), it makes two development keys (developmentKeys),
 * kept in DATA_DIR so they survive restarts; the start-up prints them last (application.ts), never in
 * a log line.
 */
/** The embedded default's two keys: account `dev`'s (ingest, read, admin) and `system`'s operator key. */
export interface DevelopmentKeys {
  key: string;
  operatorKey: string;
  files: string[];
}

@Injectable()
export class KeyBootstrapService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Keys');
  /** The development keys of this start, for the start-up's last words; null with API_KEYS or PostgreSQL. */
  development: DevelopmentKeys | null = null;

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
        : this.developmentKeys();
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

  /**
   * The embedded default's keys, so a newcomer sees every page of the console while the service
   * runs (issue 26 item 14: the key CLI needs DATABASE_URL, and a second process cannot open
   * DATA_DIR): account `dev`'s key also administers `dev` (Keys), and one `operator` key of
   * `system` manages accounts. A DATA_DIR made before keeps its keys; `register` gives its dev key
   * these scopes. Any API_KEYS revokes both (config keys no longer listed).
   */
  private developmentKeys(): BootstrapKey[] {
    const dev = this.keptKey('dev-api-key');
    const operator = this.keptKey('dev-operator-key');
    this.development = { key: dev.key, operatorKey: operator.key, files: [dev.file, operator.file] };
    this.logger.log(`Development keys kept in ${dev.file} and ${operator.file} (set API_KEYS for real keys)`);
    return [
      { account: 'dev', key: dev.key, scopes: ['ingest', 'read', 'admin'], name: 'development key' },
      { account: SYSTEM_ACCOUNT, key: operator.key, scopes: ['operator'], name: 'development operator key' },
    ];
  }

  /** The key kept in DATA_DIR/`name` (0600), made there at the first start. */
  private keptKey(name: string): { key: string; file: string } {
    const file = join(this.config.dataDir, name);
    let key = existsSync(file) ? readFileSync(file, 'utf8').trim() : '';
    if (!key) {
      key = generateApiKey();
      mkdirSync(this.config.dataDir, { recursive: true });
      writeFileSync(file, `${key}\n`, { mode: 0o600 });
    }
    return { key, file };
  }

  /** Race-safe, so several instances may start with the same API_KEYS. */
  private async register(entry: BootstrapKey, tx: Db): Promise<void> {
    const accountId = await this.accounts.ensureByName(entry.account, `acc_${ulid()}`, tx);
    const row = await this.apiKeys.upsertConfigured(
      {
        id: `key_${ulid()}`,
        accountId,
        name: entry.name ?? 'API_KEYS',
        // A development key made before it had its name is renamed; an API_KEYS entry keeps its key's name.
        rename: entry.name !== undefined,
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
