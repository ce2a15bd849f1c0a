import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Idempotent retries of POST /v1/events (docs/contract.md §7). A key is claimed before the append; the
 * stored response is written in the same transaction as the event, so a replay can never see
 * an event without its response or a response without its event.
 */
export class IdempotencyKeys1763900000000 implements MigrationInterface {
  name = 'IdempotencyKeys1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE idempotency_keys (
        account_id      varchar(30)  NOT NULL,
        key             varchar(255) NOT NULL,
        request_digest  char(64)     NOT NULL,
        claimed_at      timestamptz(3) NOT NULL DEFAULT now(),
        response        text,
        CONSTRAINT pk_idempotency_keys PRIMARY KEY (account_id, key),
        CONSTRAINT fk_idempotency_keys_account FOREIGN KEY (account_id) REFERENCES accounts (id)
      )`);
    await q.query(`CREATE INDEX ix_idempotency_keys_claimed ON idempotency_keys (claimed_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE idempotency_keys`);
  }
}
