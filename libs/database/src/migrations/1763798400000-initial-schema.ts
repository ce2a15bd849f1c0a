import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Accounts, hashed API keys, chains (each row is the chain's head) and events.
 * Listing is keyset-paginated by (timestamp, id) within an account, so every filter of
 * GET /v1/events has an index that ends in (timestamp, id).
 */
export class InitialSchema1763798400000 implements MigrationInterface {
  name = 'InitialSchema1763798400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE accounts (
        id          varchar(30) NOT NULL,
        name        text        NOT NULL,
        created_at  timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT pk_accounts PRIMARY KEY (id),
        CONSTRAINT uq_accounts_name UNIQUE (name)
      )`);
    await q.query(`
      CREATE TABLE api_keys (
        id          varchar(30) NOT NULL,
        account_id  varchar(30) NOT NULL,
        prefix      varchar(16) NOT NULL,
        key_digest  char(64)    NOT NULL,
        scopes      text[]      NOT NULL,
        created_at  timestamptz(3) NOT NULL DEFAULT now(),
        revoked_at  timestamptz(3),
        CONSTRAINT pk_api_keys PRIMARY KEY (id),
        CONSTRAINT uq_api_keys_key_digest UNIQUE (key_digest),
        CONSTRAINT fk_api_keys_account FOREIGN KEY (account_id) REFERENCES accounts (id),
        CONSTRAINT ck_api_keys_scopes CHECK (scopes <@ ARRAY['ingest','read']::text[] AND cardinality(scopes) > 0)
      )`);
    await q.query(`
      CREATE TABLE chains (
        id              varchar(30)  NOT NULL,
        account_id      varchar(30)  NOT NULL,
        name            varchar(128) NOT NULL,
        last_position   bigint       NOT NULL DEFAULT 0,
        last_hash       char(64)     NOT NULL DEFAULT repeat('0', 64),
        last_timestamp  timestamptz(3),
        created_at      timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT pk_chains PRIMARY KEY (id),
        CONSTRAINT uq_chains_account_name UNIQUE (account_id, name),
        CONSTRAINT fk_chains_account FOREIGN KEY (account_id) REFERENCES accounts (id),
        CONSTRAINT ck_chains_last_position CHECK (last_position >= 0)
      )`);
    await q.query(`CREATE INDEX ix_chains_account_created ON chains (account_id, created_at, id)`);
    await q.query(`
      CREATE TABLE events (
        id             varchar(30) NOT NULL,
        account_id     varchar(30) NOT NULL,
        chain_id       varchar(30) NOT NULL,
        position       bigint      NOT NULL,
        actor          text        NOT NULL,
        action         text        NOT NULL,
        resource       text,
        context        jsonb,
        "timestamp"    timestamptz(3) NOT NULL,
        previous_hash  char(64)    NOT NULL,
        hash           char(64)    NOT NULL,
        CONSTRAINT pk_events PRIMARY KEY (id),
        CONSTRAINT uq_events_chain_position UNIQUE (chain_id, position),
        CONSTRAINT fk_events_chain FOREIGN KEY (chain_id) REFERENCES chains (id),
        CONSTRAINT ck_events_position CHECK (position >= 1)
      )`);
    await q.query(`CREATE INDEX ix_events_account_time ON events (account_id, "timestamp", id)`);
    await q.query(`CREATE INDEX ix_events_account_actor ON events (account_id, actor, "timestamp", id)`);
    await q.query(`CREATE INDEX ix_events_account_action ON events (account_id, action, "timestamp", id)`);
    await q.query(`CREATE INDEX ix_events_account_resource ON events (account_id, resource, "timestamp", id)`);
    await q.query(`CREATE INDEX ix_events_chain_time ON events (chain_id, "timestamp", id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE events`);
    await q.query(`DROP TABLE chains`);
    await q.query(`DROP TABLE api_keys`);
    await q.query(`DROP TABLE accounts`);
  }
}
