import { MigrationInterface, QueryRunner } from 'typeorm';
import { HEAD_FORWARD_1763800000000 } from './functions/audit-chain-head-forward';
import { STARTS_EMPTY_1763800000000 } from './functions/audit-chain-starts-empty';

/**
 * Append-only schema and signed checkpoints.
 *
 * - events: UPDATE, DELETE and TRUNCATE are refused (statement triggers, so they cost nothing
 *   on the append path and refuse even a statement that matches no row).
 * - chains: a head only moves forward, by exactly the events appended for it in the same
 *   transaction: the new position is the old one plus the number of events above the old one,
 *   no event lies beyond it, the first new event links to the old head, and the new head hash
 *   and timestamp are those of the event at the new position. Identity columns never change; a new
 *   chain starts empty; chains are never deleted or truncated.
 * - checkpoints: what the service signed, one row per (chain, size); never changed or removed.
 *
 * A superuser can still switch triggers off (session_replication_role = replica, ALTER TABLE …
 * DISABLE TRIGGER): that is what signed checkpoints held outside the database are for. The
 * service should run as a role that owns nothing (docs/verification.md), so it cannot.
 */
export class AppendOnlyAndCheckpoints1763800000000 implements MigrationInterface {
  name = 'AppendOnlyAndCheckpoints1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE checkpoints (
        chain_id    varchar(30) NOT NULL,
        size        bigint      NOT NULL,
        hash        char(64)    NOT NULL,
        key_id      char(8)     NOT NULL,
        note        text        NOT NULL,
        created_at  timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT pk_checkpoints PRIMARY KEY (chain_id, size),
        CONSTRAINT fk_checkpoints_chain FOREIGN KEY (chain_id) REFERENCES chains (id),
        CONSTRAINT ck_checkpoints_size CHECK (size >= 0),
        CONSTRAINT ck_checkpoints_hash CHECK (hash ~ '^[0-9a-f]{64}$'),
        CONSTRAINT ck_checkpoints_key_id CHECK (key_id ~ '^[0-9a-f]{8}$')
      )`);

    await q.query(`
      CREATE FUNCTION audit_reject_change() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        RAISE EXCEPTION '% on % is not allowed: the audit trail is append-only', TG_OP, TG_TABLE_NAME
          USING ERRCODE = 'insufficient_privilege';
      END $$`);
    for (const table of ['events', 'checkpoints']) {
      for (const op of ['UPDATE', 'DELETE', 'TRUNCATE']) {
        await q.query(
          `CREATE TRIGGER trg_${table}_reject_${op.toLowerCase()} BEFORE ${op} ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION audit_reject_change()`,
        );
      }
    }
    for (const op of ['DELETE', 'TRUNCATE']) {
      await q.query(
        `CREATE TRIGGER trg_chains_reject_${op.toLowerCase()} BEFORE ${op} ON chains FOR EACH STATEMENT EXECUTE FUNCTION audit_reject_change()`,
      );
    }

    await q.query(STARTS_EMPTY_1763800000000);
    await q.query(
      `CREATE TRIGGER trg_chains_start_empty BEFORE INSERT ON chains FOR EACH ROW EXECUTE FUNCTION audit_chain_starts_empty()`,
    );

    await q.query(HEAD_FORWARD_1763800000000);
    await q.query(
      `CREATE TRIGGER trg_chains_head_forward BEFORE UPDATE ON chains FOR EACH ROW EXECUTE FUNCTION audit_chain_head_forward()`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TRIGGER trg_chains_head_forward ON chains`);
    await q.query(`DROP TRIGGER trg_chains_start_empty ON chains`);
    for (const op of ['delete', 'truncate']) await q.query(`DROP TRIGGER trg_chains_reject_${op} ON chains`);
    for (const table of ['events', 'checkpoints']) {
      for (const op of ['update', 'delete', 'truncate'])
        await q.query(`DROP TRIGGER trg_${table}_reject_${op} ON ${table}`);
    }
    await q.query(`DROP FUNCTION audit_chain_head_forward()`);
    await q.query(`DROP FUNCTION audit_chain_starts_empty()`);
    await q.query(`DROP FUNCTION audit_reject_change()`);
    await q.query(`DROP TABLE checkpoints`);
  }
}
