import { MigrationInterface, QueryRunner } from 'typeorm';
import { PRUNE_POLICY_1764800000000 } from './functions/audit-chain-prune-policy';
import { PRUNE_CHAIN_1764800000000 } from './functions/audit-prune-chain';

/**
 * Retention and legal hold (docs/contract.md §14, issue 21).
 *
 * - accounts and chains get their settings: `retention_days` (1–36,500; null = forever on an
 *   account, "follow the account" on a chain), `legal_hold` and its `legal_hold_reason`.
 * - chains get `first_position` (the first retained position, 1 until a prune) and the last pruned
 *   event's hash and timestamp (`pruned_hash`, `pruned_timestamp`): what the link of the first
 *   retained event and the time order are checked against.
 * - Only a prefix older than the policy is ever deleted, and the database says so itself:
 *   `trg_chains_prune_policy` lets `first_position` move only forward, never past the head, only
 *   when neither the chain nor its account is on hold, the effective retention is not forever, and
 *   the last event it passes is older than the retention (timestamps never decrease along a
 *   chain, so every event before it is older too), recording that event's hash and timestamp.
 *   The statement-level refusals of DELETE on `events` and `merkle_nodes` become checks of what a
 *   statement deleted (transition tables): an event at or after its chain's `first_position`, or a
 *   Merkle node that is kept (`audit_merkle_node_kept`), makes the statement fail.
 *   UPDATE and TRUNCATE stay refused, and `checkpoints` stay untouchable.
 * - `audit_prune_chain` is the one path that uses this: a SECURITY DEFINER function that takes no
 *   position to delete from its caller, only a bound (`up_to`: the size of the checkpoint the
 *   service signed first; it never passes the largest signed checkpoint anyway). Under the chain's lock (the row lock appends take) it finds the
 *   longest prefix from `first_position` older than the retention, at most `max_events` of it,
 *   stores the Merkle nodes below level 2 that it keeps (`audit_merkle_node_kept`: what proofs of
 *   the remaining events need, and what binds the last pruned event's hash to the tree; they were
 *   derived from the events it deletes), moves `first_position`, deletes the events and the nodes
 *   not kept, and answers how many events it deleted.
 * - merkle_nodes may hold levels 0 and 1 again, only for pruned ranges (the nodes kept above).
 *
 * The clock: `now()` of the database plus the caller's `clock_offset_seconds` (≥ 0), passed down
 * to the trigger through a transaction-local setting. It exists for tests
 * (RETENTION_CLOCK_OFFSET_SECONDS) and is honoured only for a session of the function's owner (or a
 * superuser): the least-privilege service role of docs/verification.md, which cannot update
 * `first_position` nor delete events itself, gets the database's clock.
 */
export class Retention1764800000000 implements MigrationInterface {
  name = 'Retention1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE accounts ADD COLUMN retention_days integer,
                   ADD COLUMN legal_hold boolean NOT NULL DEFAULT false, ADD COLUMN legal_hold_reason text`);
    await q.query(
      `ALTER TABLE accounts ADD CONSTRAINT ck_accounts_retention_days CHECK (retention_days >= 1 AND retention_days <= 36500)`,
    );
    await q.query(
      `ALTER TABLE accounts ADD CONSTRAINT ck_accounts_legal_hold CHECK (NOT legal_hold OR legal_hold_reason IS NOT NULL)`,
    );
    await q.query(`ALTER TABLE chains ADD COLUMN retention_days integer,
                   ADD COLUMN legal_hold boolean NOT NULL DEFAULT false, ADD COLUMN legal_hold_reason text,
                   ADD COLUMN first_position bigint NOT NULL DEFAULT 1,
                   ADD COLUMN pruned_hash char(64), ADD COLUMN pruned_timestamp timestamptz(3)`);
    await q.query(
      `ALTER TABLE chains ADD CONSTRAINT ck_chains_retention_days CHECK (retention_days >= 1 AND retention_days <= 36500)`,
    );
    await q.query(
      `ALTER TABLE chains ADD CONSTRAINT ck_chains_legal_hold CHECK (NOT legal_hold OR legal_hold_reason IS NOT NULL)`,
    );
    await q.query(
      `ALTER TABLE chains ADD CONSTRAINT ck_chains_first_position CHECK (first_position >= 1 AND first_position <= last_position + 1)`,
    );
    await q.query(
      `ALTER TABLE chains ADD CONSTRAINT ck_chains_pruned CHECK ((first_position = 1) = (pruned_hash IS NULL) AND (pruned_hash IS NULL) = (pruned_timestamp IS NULL))`,
    );
    await q.query(`ALTER TABLE merkle_nodes DROP CONSTRAINT ck_merkle_nodes_level`);
    await q.query(`ALTER TABLE merkle_nodes ADD CONSTRAINT ck_merkle_nodes_level CHECK (level >= 0 AND level <= 62)`);

    await q.query(`
      CREATE FUNCTION audit_retention_now() RETURNS timestamptz LANGUAGE sql STABLE AS $$
        SELECT now() + make_interval(secs => COALESCE(NULLIF(current_setting('audit.retention_clock_offset_seconds', true), ''), '0')::bigint)
      $$`);

    await q.query(PRUNE_POLICY_1764800000000);
    await q.query(
      `CREATE TRIGGER trg_chains_prune_policy BEFORE UPDATE ON chains FOR EACH ROW EXECUTE FUNCTION audit_chain_prune_policy()`,
    );

    // The same trigger names as before (1763800000000, 1764100000000), now checks of what a statement deleted.
    await q.query(`DROP TRIGGER trg_events_reject_delete ON events`);
    await q.query(`
      CREATE FUNCTION audit_events_deleted_pruned() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM gone g LEFT JOIN chains c ON c.id = g.chain_id
                    WHERE c.id IS NULL OR g.position >= c.first_position) THEN
          RAISE EXCEPTION 'DELETE on events is not allowed: the audit trail is append-only (a retention prune deletes only below a chain''s first retained position)'
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER trg_events_reject_delete AFTER DELETE ON events REFERENCING OLD TABLE AS gone
                   FOR EACH STATEMENT EXECUTE FUNCTION audit_events_deleted_pruned()`);

    await q.query(`DROP TRIGGER trg_merkle_nodes_reject_delete ON merkle_nodes`);
    // What a prune keeps of the tree over the pruned leaves [0, p) (p = first_position − 1): the
    // perfect subtrees that make up [0, p) (the left siblings of the first retained leaf's
    // ancestors: every proof of a retained event needs only those there) and those that make up
    // [0, p − 1), which with the last pruned event's leaf give them again: the kept hash is then
    // provably the last leaf of the signed tree (what verify-export checks a pruned chain's first
    // link with). At level l that is index (p >> l) − 1 when bit l of p is set, and likewise for p − 1.
    await q.query(`
      CREATE FUNCTION audit_merkle_node_kept(lvl integer, idx bigint, p bigint) RETURNS boolean
        LANGUAGE sql IMMUTABLE AS $$
        SELECT idx >= (p >> lvl)
            OR ((p >> lvl) & 1 = 1 AND idx = (p >> lvl) - 1)
            OR (p > 1 AND ((p - 1) >> lvl) & 1 = 1 AND idx = ((p - 1) >> lvl) - 1)
      $$`);
    await q.query(`
      CREATE FUNCTION audit_merkle_nodes_deleted_unneeded() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF EXISTS (SELECT 1 FROM gone g LEFT JOIN chains c ON c.id = g.chain_id
                    WHERE c.id IS NULL OR audit_merkle_node_kept(g.level, g."index", c.first_position - 1)) THEN
          RAISE EXCEPTION 'DELETE on merkle_nodes is not allowed: the audit trail is append-only (a retention prune deletes only nodes no proof of a retained event needs)'
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`CREATE TRIGGER trg_merkle_nodes_reject_delete AFTER DELETE ON merkle_nodes REFERENCING OLD TABLE AS gone
                   FOR EACH STATEMENT EXECUTE FUNCTION audit_merkle_nodes_deleted_unneeded()`);

    await q.query(PRUNE_CHAIN_1764800000000);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION audit_prune_chain(varchar, bigint, integer, bigint)`);
    await q.query(`DROP TRIGGER trg_merkle_nodes_reject_delete ON merkle_nodes`);
    await q.query(`DROP FUNCTION audit_merkle_nodes_deleted_unneeded()`);
    await q.query(`DROP FUNCTION audit_merkle_node_kept(integer, bigint, bigint)`);
    await q.query(
      `CREATE TRIGGER trg_merkle_nodes_reject_delete BEFORE DELETE ON merkle_nodes FOR EACH STATEMENT EXECUTE FUNCTION audit_reject_change()`,
    );
    await q.query(`DROP TRIGGER trg_events_reject_delete ON events`);
    await q.query(`DROP FUNCTION audit_events_deleted_pruned()`);
    await q.query(
      `CREATE TRIGGER trg_events_reject_delete BEFORE DELETE ON events FOR EACH STATEMENT EXECUTE FUNCTION audit_reject_change()`,
    );
    await q.query(`DROP TRIGGER trg_chains_prune_policy ON chains`);
    await q.query(`DROP FUNCTION audit_chain_prune_policy()`);
    await q.query(`DROP FUNCTION audit_retention_now()`);
    await q.query(`ALTER TABLE merkle_nodes DROP CONSTRAINT ck_merkle_nodes_level`);
    await q.query(`ALTER TABLE merkle_nodes ADD CONSTRAINT ck_merkle_nodes_level CHECK (level >= 2 AND level <= 62)`);
    await q.query(`ALTER TABLE chains DROP CONSTRAINT ck_chains_pruned, DROP CONSTRAINT ck_chains_first_position,
                   DROP CONSTRAINT ck_chains_legal_hold, DROP CONSTRAINT ck_chains_retention_days`);
    await q.query(`ALTER TABLE chains DROP COLUMN pruned_timestamp, DROP COLUMN pruned_hash, DROP COLUMN first_position,
                   DROP COLUMN legal_hold_reason, DROP COLUMN legal_hold, DROP COLUMN retention_days`);
    await q.query(
      `ALTER TABLE accounts DROP CONSTRAINT ck_accounts_legal_hold, DROP CONSTRAINT ck_accounts_retention_days`,
    );
    await q.query(
      `ALTER TABLE accounts DROP COLUMN legal_hold_reason, DROP COLUMN legal_hold, DROP COLUMN retention_days`,
    );
  }
}
