import { MigrationInterface, QueryRunner } from 'typeorm';

/** audit_chain_head_forward as this migration creates it (1765300000000 replaces it; its down() restores this). */
export const HEAD_FORWARD_1763800000000 = `
      CREATE FUNCTION audit_chain_head_forward() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        appended bigint;
        beyond bigint;
        head record;
        first_link char(64);
      BEGIN
        IF NEW.id <> OLD.id OR NEW.account_id <> OLD.account_id OR NEW.name <> OLD.name OR NEW.created_at <> OLD.created_at THEN
          RAISE EXCEPTION 'chain %: id, account, name and creation time never change', OLD.id USING ERRCODE = 'check_violation';
        END IF;
        IF NEW.last_position = OLD.last_position
           AND NEW.last_hash = OLD.last_hash AND NEW.last_timestamp IS NOT DISTINCT FROM OLD.last_timestamp THEN
          RETURN NEW;
        END IF;
        IF NEW.last_position <= OLD.last_position THEN
          RAISE EXCEPTION 'chain %: the head cannot move from position % to %', OLD.id, OLD.last_position, NEW.last_position
            USING ERRCODE = 'check_violation';
        END IF;
        SELECT count(*) FILTER (WHERE e.position <= NEW.last_position), count(*) FILTER (WHERE e.position > NEW.last_position)
          INTO appended, beyond
          FROM events e WHERE e.chain_id = NEW.id AND e.position > OLD.last_position;
        IF appended <> NEW.last_position - OLD.last_position OR beyond <> 0 THEN
          RAISE EXCEPTION 'chain %: the head must move forward by exactly the % event(s) appended, not to position %',
            OLD.id, appended + beyond, NEW.last_position USING ERRCODE = 'check_violation';
        END IF;
        SELECT e.hash, e."timestamp" INTO head FROM events e WHERE e.chain_id = NEW.id AND e.position = NEW.last_position;
        SELECT e.previous_hash INTO first_link FROM events e WHERE e.chain_id = NEW.id AND e.position = OLD.last_position + 1;
        IF head.hash IS DISTINCT FROM NEW.last_hash OR head."timestamp" IS DISTINCT FROM NEW.last_timestamp
           OR first_link IS DISTINCT FROM OLD.last_hash THEN
          RAISE EXCEPTION 'chain %: the new head must be the hash and time of the event at position %, linked to the old head',
            OLD.id, NEW.last_position USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
      END $$`;

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

    await q.query(`
      CREATE FUNCTION audit_chain_starts_empty() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.last_position <> 0 OR NEW.last_hash <> repeat('0', 64) OR NEW.last_timestamp IS NOT NULL THEN
          RAISE EXCEPTION 'chain %: a new chain starts at position 0 with the genesis hash', NEW.id
            USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
      END $$`);
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
