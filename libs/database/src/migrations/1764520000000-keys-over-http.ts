import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounts and keys over HTTP (docs/contract.md §12, issue 19), and API_KEYS followed at every start
 * (issue 18 item 12):
 * - `api_keys.origin`: where a key came from. `config` keys follow API_KEYS at every start (scopes
 *   set, unlisted ones revoked); `cli` and `api` keys are never touched by it. Keys that exist
 *   before this migration cannot tell, so they become `cli` (never revoked automatically) and a
 *   key still listed in API_KEYS is claimed as `config` at the next start.
 * - `name`, `expires_at`, `last_used_at` of a key; the scopes `admin` and `operator`.
 * - the indexes the account and key listings read: accounts by creation, keys by account.
 */
export class KeysOverHttp1764520000000 implements MigrationInterface {
  name = 'KeysOverHttp1764520000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE api_keys ADD COLUMN name text NOT NULL DEFAULT 'unnamed'`);
    await q.query(`ALTER TABLE api_keys ALTER COLUMN name DROP DEFAULT`);
    await q.query(`ALTER TABLE api_keys ADD COLUMN origin text NOT NULL DEFAULT 'cli'`);
    await q.query(`ALTER TABLE api_keys ALTER COLUMN origin DROP DEFAULT`);
    await q.query(`ALTER TABLE api_keys ADD COLUMN expires_at timestamptz(3)`);
    await q.query(`ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz(3)`);
    await q.query(`ALTER TABLE api_keys ADD CONSTRAINT ck_api_keys_origin CHECK (origin IN ('config', 'cli', 'api'))`);
    await q.query(`ALTER TABLE api_keys DROP CONSTRAINT ck_api_keys_scopes`);
    await q.query(
      `ALTER TABLE api_keys ADD CONSTRAINT ck_api_keys_scopes CHECK (scopes <@ ARRAY['ingest','read','admin','operator']::text[] AND cardinality(scopes) > 0)`,
    );
    await q.query(`CREATE INDEX ix_api_keys_account ON api_keys (account_id, created_at, id)`);
    await q.query(`CREATE INDEX ix_accounts_created ON accounts (created_at, id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_accounts_created`);
    await q.query(`DROP INDEX ix_api_keys_account`);
    await q.query(
      `UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE NOT scopes <@ ARRAY['ingest','read']::text[]`,
    );
    await q.query(`UPDATE api_keys SET scopes = ARRAY(SELECT s FROM unnest(scopes) s WHERE s IN ('ingest','read'))`);
    await q.query(`UPDATE api_keys SET scopes = ARRAY['read'] WHERE cardinality(scopes) = 0`);
    await q.query(`ALTER TABLE api_keys DROP CONSTRAINT ck_api_keys_scopes`);
    await q.query(
      `ALTER TABLE api_keys ADD CONSTRAINT ck_api_keys_scopes CHECK (scopes <@ ARRAY['ingest','read']::text[] AND cardinality(scopes) > 0)`,
    );
    await q.query(`ALTER TABLE api_keys DROP CONSTRAINT ck_api_keys_origin`);
    await q.query(
      `ALTER TABLE api_keys DROP COLUMN last_used_at, DROP COLUMN expires_at, DROP COLUMN origin, DROP COLUMN name`,
    );
  }
}
