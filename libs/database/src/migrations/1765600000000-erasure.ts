import { MigrationInterface, QueryRunner } from 'typeorm';
import { ERASE_EVENTS_1765600000000 } from './functions/audit-erase-events';
import { UPDATE_GATE_1765600000000 } from './functions/audit-events-update-gate';

/** The refusal of every UPDATE of events as 1763800000000 made it (a statement trigger). */
const REJECT_UPDATE_1763800000000 = `CREATE TRIGGER trg_events_reject_update BEFORE UPDATE ON events FOR EACH STATEMENT EXECUTE FUNCTION audit_reject_change()`;

/**
 * Erasure (docs/contract.md §17): the personal fields of version-2 events are nulled on request, their
 * commitments kept, so that every hash, link, tree node, proof and checkpoint stays as it was.
 *
 * - `audit_erase_events(account, rows)` is the one way to change an event: a SECURITY DEFINER function
 *   (the owner's; the service's role has EXECUTE on it and still no UPDATE on events). Each row names
 *   an event of the account, whether its actor and its resource are erased, the context left (the
 *   members kept, unchanged) and the erasure record (the salts of the fields kept, the commitments of
 *   the erased ones). It opens the gate for its own statement (`audit.erasure`, transaction-local) and
 *   closes it again.
 * - `trg_events_reject_update` refuses any other UPDATE statement (the gate shut); whoever sets the gate
 *   by hand still needs the UPDATE privilege, and still meets:
 * - `trg_events_erasure_check`, row by row: every changed row was a version-2 event and is a valid
 *   erasure of it. Nothing that is hashed or placed
 *   changes (id, account, chain, position, action, timestamp, both hashes, txid); the actor and the
 *   resource either stay or become null with a kept commitment; the context keeps a subset of its
 *   members unchanged, each removed one with a kept commitment; a commitment kept before is kept
 *   as it was; the seed is gone; and neither the chain nor its account is under legal hold.
 * - `events.actor` may be null (erased), only on an event with an erasure record.
 * - `erasures`: the record of each erasure for GET /v1/erasures (never the query nor a value).
 */
export class Erasure1765600000000 implements MigrationInterface {
  name = 'Erasure1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE events ALTER COLUMN actor DROP NOT NULL,
                   ADD CONSTRAINT ck_events_actor CHECK (actor IS NOT NULL OR erasure IS NOT NULL) NOT VALID`);
    // Every row holds an actor today: validated without blocking appends for long (SHARE UPDATE EXCLUSIVE).
    await q.query(`ALTER TABLE events VALIDATE CONSTRAINT ck_events_actor`);

    await q.query(`
      CREATE TABLE erasures (
        id varchar(30) NOT NULL,
        account_id varchar(30) NOT NULL,
        "at" timestamptz(3) NOT NULL DEFAULT now(),
        key_id varchar(30) NOT NULL,
        events integer NOT NULL,
        skipped integer NOT NULL,
        fields text[] NOT NULL,
        reason text NOT NULL,
        CONSTRAINT pk_erasures PRIMARY KEY (id),
        CONSTRAINT fk_erasures_account FOREIGN KEY (account_id) REFERENCES accounts (id),
        CONSTRAINT ck_erasures_counts CHECK (events >= 0 AND skipped >= 0)
      )`);
    await q.query(`CREATE INDEX ix_erasures_account_at ON erasures (account_id, "at", id)`);

    await q.query(`DROP TRIGGER trg_events_reject_update ON events`);
    await q.query(UPDATE_GATE_1765600000000);
    await q.query(
      `CREATE TRIGGER trg_events_reject_update BEFORE UPDATE ON events FOR EACH STATEMENT EXECUTE FUNCTION audit_events_update_gate()`,
    );
    // Row by row (a statement-level check joining the transition tables took 30 s for 10,000 rows:
    // they carry no index, and the join was planned as a nested loop).
    await q.query(`
      CREATE FUNCTION audit_events_erasure_check() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NOT (OLD.salt_seed IS NOT NULL OR OLD.erasure IS NOT NULL)
           OR NEW.salt_seed IS NOT NULL OR NEW.erasure IS NULL
           OR (NEW.id, NEW.account_id, NEW.chain_id, NEW.position, NEW.action, NEW."timestamp", NEW.previous_hash, NEW.hash, NEW.txid)
              IS DISTINCT FROM (OLD.id, OLD.account_id, OLD.chain_id, OLD.position, OLD.action, OLD."timestamp", OLD.previous_hash, OLD.hash, OLD.txid)
           OR NOT (NEW.actor IS NOT DISTINCT FROM OLD.actor OR (NEW.actor IS NULL AND NEW.erasure -> 'commitments' ? 'actor'))
           OR NOT (NEW.resource IS NOT DISTINCT FROM OLD.resource OR (NEW.resource IS NULL AND NEW.erasure -> 'commitments' ? 'resource'))
           OR (OLD.context IS NULL) <> (NEW.context IS NULL)
           OR (OLD.context IS NOT NULL AND (
                 jsonb_typeof(NEW.context) <> 'object'
                 OR EXISTS (SELECT 1 FROM jsonb_each(NEW.context) m WHERE OLD.context -> m.key IS DISTINCT FROM m.value)
                 OR EXISTS (SELECT 1 FROM jsonb_object_keys(OLD.context) k
                             WHERE NOT NEW.context ? k AND NOT coalesce(NEW.erasure -> 'commitments' -> 'context' ? k, false))))
           OR (OLD.erasure IS NOT NULL AND NOT (NEW.erasure -> 'commitments') @> (OLD.erasure -> 'commitments'))
           OR EXISTS (SELECT 1 FROM chains c WHERE c.id = OLD.chain_id AND c.legal_hold)
           OR EXISTS (SELECT 1 FROM accounts a WHERE a.id = OLD.account_id AND a.legal_hold)
        THEN
          RAISE EXCEPTION 'UPDATE of event %: only an erasure of a version-2 event not under legal hold may change an event, and only its personal fields', OLD.id
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
      END $$`);
    await q.query(
      `CREATE TRIGGER trg_events_erasure_check BEFORE UPDATE ON events FOR EACH ROW EXECUTE FUNCTION audit_events_erasure_check()`,
    );
    // Enabled as the refusal they replace was (origin): a superuser who sets session_replication_role =
    // replica passes them, as it passes every other refusal; signed checkpoints are for that (§10).

    await q.query(ERASE_EVENTS_1765600000000);
    await q.query(`REVOKE ALL ON FUNCTION audit_erase_events(varchar, jsonb) FROM PUBLIC`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION audit_erase_events(varchar, jsonb)`);
    await q.query(`DROP TRIGGER trg_events_erasure_check ON events`);
    await q.query(`DROP TRIGGER trg_events_reject_update ON events`);
    await q.query(`DROP FUNCTION audit_events_erasure_check()`);
    await q.query(`DROP FUNCTION audit_events_update_gate()`);
    await q.query(REJECT_UPDATE_1763800000000);
    await q.query(`DROP TABLE erasures`);
    await q.query(`ALTER TABLE events DROP CONSTRAINT ck_events_actor, ALTER COLUMN actor SET NOT NULL`);
  }
}
