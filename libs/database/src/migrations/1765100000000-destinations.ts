import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `destinations` (docs/contract.md §16): where an account's events are streamed, each with its position.
 *
 * - `position` is the live tail's stream position (apps/api/src/events/stream/stream-position.ts:
 *   the window of commits being read and the last event sent from it), written with each batch the
 *   receiver acknowledged, so a restart, a crash or a failover resumes from it.
 * - `secrets` holds the credentials (a webhook's signing secrets, a Splunk token, a Datadog key,
 *   custom headers) sealed with AES-256-GCM under SECRETS_KEY; the database never sees them plain.
 * - `lease_owner`/`lease_until`: the one instance delivering the destination; an instance renews its
 *   leases every STREAM_LEASE_SECONDS and a lease lasts three of those, so another takes over a
 *   stopped instance's destinations within 30 s.
 * - `version` grows with every change made through the API (settings, pause, resume, replay, a
 *   rotated secret): an instance's acknowledgement names the version it delivers, so a delivery
 *   begun before a change never writes over it.
 */
export class Destinations1765100000000 implements MigrationInterface {
  name = 'Destinations1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE destinations (
        id                       varchar(30)    NOT NULL,
        account_id               varchar(30)    NOT NULL,
        name                     text           NOT NULL,
        kind                     varchar(16)    NOT NULL,
        url                      text           NOT NULL,
        format                   varchar(8)     NOT NULL,
        q                        text,
        batch_size               integer        NOT NULL,
        timeout_seconds          integer        NOT NULL,
        options                  jsonb          NOT NULL,
        secrets                  bytea          NOT NULL,
        start                    text           NOT NULL,
        state                    varchar(8)     NOT NULL,
        version                  integer        NOT NULL DEFAULT 1,
        position                 jsonb          NOT NULL,
        delivered_events         bigint         NOT NULL DEFAULT 0,
        last_delivered_at        timestamptz(3),
        last_delivered_event_at  timestamptz(3),
        caught_up                boolean        NOT NULL DEFAULT false,
        consecutive_failures     integer        NOT NULL DEFAULT 0,
        failing_since            timestamptz(3),
        last_error               jsonb,
        lease_owner              varchar(40),
        lease_until              timestamptz(3),
        created_at               timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT pk_destinations PRIMARY KEY (id),
        CONSTRAINT fk_destinations_account FOREIGN KEY (account_id) REFERENCES accounts (id),
        CONSTRAINT ck_destinations_kind CHECK (kind IN ('webhook', 'splunk_hec', 'datadog', 'otlp', 'syslog', 'nats')),
        CONSTRAINT ck_destinations_format CHECK (format IN ('native', 'ocsf', 'cef')),
        CONSTRAINT ck_destinations_state CHECK (state IN ('active', 'retrying', 'paused', 'disabled')),
        CONSTRAINT ck_destinations_batch_size CHECK (batch_size BETWEEN 1 AND 1000),
        CONSTRAINT ck_destinations_timeout CHECK (timeout_seconds BETWEEN 1 AND 30)
      )`);
    await q.query(`CREATE INDEX ix_destinations_account ON destinations (account_id, created_at, id)`);
    await q.query(`CREATE INDEX ix_destinations_lease ON destinations (state, lease_until)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE destinations`);
  }
}
