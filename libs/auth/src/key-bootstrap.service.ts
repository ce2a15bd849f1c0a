import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { ulid } from 'ulid';
import { AppConfig, BootstrapKey } from '@app/common';
import { apiKeyPrefix, digestApiKey, generateApiKey } from './api-key';

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
    private readonly dataSource: DataSource,
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
  async register({ account, key, scopes }: BootstrapKey): Promise<{ accountId: string; keyId: string }> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(`INSERT INTO accounts (id, name) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, [`acc_${ulid()}`, account]);
      const [{ id: accountId }] = (await manager.query(`SELECT id FROM accounts WHERE name = $1`, [account])) as [{ id: string }];
      await manager.query(
        `INSERT INTO api_keys (id, account_id, prefix, key_digest, scopes) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (key_digest) DO NOTHING`,
        [`key_${ulid()}`, accountId, apiKeyPrefix(key), digestApiKey(key), scopes],
      );
      const rows = (await manager.query(`SELECT id, account_id FROM api_keys WHERE key_digest = $1`, [digestApiKey(key)])) as { id: string; account_id: string }[];
      const row = rows[0];
      if (!row || row.account_id !== accountId) {
        throw new Error(`API_KEYS: the key given for account '${account}' is already registered to another account`);
      }
      return { accountId, keyId: row.id };
    });
  }
}
