import { MigrationInterface, QueryRunner } from 'typeorm';

/** audit_chain_prune_policy as this migration creates it (1765000000000 replaces it; its down() restores this). */
export const PRUNE_POLICY_1764800000000 = `
      CREATE FUNCTION audit_chain_prune_policy() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        retention integer;
        held boolean;
        last_pruned record;
      BEGIN
        IF NEW.first_position = OLD.first_position AND NEW.pruned_hash IS NOT DISTINCT FROM OLD.pruned_hash
           AND NEW.pruned_timestamp IS NOT DISTINCT FROM OLD.pruned_timestamp THEN
          RETURN NEW;
        END IF;
        IF NEW.first_position <= OLD.first_position OR NEW.first_position > NEW.last_position + 1 THEN
          RAISE EXCEPTION 'chain %: the first retained position moves only forward, at most past the head', OLD.id
            USING ERRCODE = 'check_violation';
        END IF;
        SELECT COALESCE(NEW.retention_days, a.retention_days), NEW.legal_hold OR a.legal_hold
          INTO retention, held FROM accounts a WHERE a.id = NEW.account_id;
        IF held THEN
          RAISE EXCEPTION 'chain %: under legal hold, nothing is pruned', OLD.id USING ERRCODE = 'insufficient_privilege';
        END IF;
        IF retention IS NULL THEN
          RAISE EXCEPTION 'chain %: its events are kept forever', OLD.id USING ERRCODE = 'insufficient_privilege';
        END IF;
        SELECT e.hash, e."timestamp" INTO last_pruned FROM events e WHERE e.chain_id = NEW.id AND e.position = NEW.first_position - 1;
        IF NOT FOUND OR last_pruned.hash IS DISTINCT FROM NEW.pruned_hash OR last_pruned."timestamp" IS DISTINCT FROM NEW.pruned_timestamp THEN
          RAISE EXCEPTION 'chain %: the kept hash and time must be those of the event at position %', OLD.id, NEW.first_position - 1
            USING ERRCODE = 'check_violation';
        END IF;
        IF last_pruned."timestamp" >= audit_retention_now() - make_interval(days => retention) THEN
          RAISE EXCEPTION 'chain %: the event at position % is not older than the retention of % day(s)', OLD.id, NEW.first_position - 1, retention
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NEW;
      END $$`;

/** audit_prune_chain as this migration creates it (1765000000000 replaces it; its down() restores this). */
export const PRUNE_CHAIN_1764800000000 = `
      CREATE FUNCTION audit_prune_chain(p_chain_id varchar, p_up_to bigint, p_max_events integer, p_clock_offset_seconds bigint)
        RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
      DECLARE
        c record;
        retention integer;
        held boolean;
        first_recent bigint;
        signed bigint;
        target bigint;
        p bigint;
        q bigint;
        lvl integer;
        deleted bigint;
      BEGIN
        IF p_up_to IS NULL OR p_max_events IS NULL OR p_max_events < 1 OR p_clock_offset_seconds IS NULL OR p_clock_offset_seconds < 0 THEN
          RAISE EXCEPTION 'audit_prune_chain: up_to given, max_events ≥ 1, clock_offset_seconds ≥ 0' USING ERRCODE = 'invalid_parameter_value';
        END IF;
        -- Inside this function current_user is its owner: a testing clock offset is honoured only for a
        -- session of the owner (or a superuser), never for a least-privilege service role.
        IF p_clock_offset_seconds <> 0 AND NOT pg_has_role(session_user, current_user, 'MEMBER') THEN
          RAISE EXCEPTION 'audit_prune_chain: only the owner''s role may shift the clock' USING ERRCODE = 'insufficient_privilege';
        END IF;
        PERFORM set_config('audit.retention_clock_offset_seconds', p_clock_offset_seconds::text, true);
        SELECT ch.id, ch.account_id, ch.first_position, ch.last_position, ch.retention_days, ch.legal_hold
          INTO c FROM chains ch WHERE ch.id = p_chain_id FOR UPDATE;
        IF NOT FOUND THEN RETURN 0; END IF;
        SELECT COALESCE(c.retention_days, a.retention_days), c.legal_hold OR a.legal_hold
          INTO retention, held FROM accounts a WHERE a.id = c.account_id;
        IF held OR retention IS NULL OR c.first_position > c.last_position THEN RETURN 0; END IF;
        -- The first event of this batch's window that is not older than the retention (the run of old
        -- events from first_position ends before it): an index range of at most max_events positions.
        SELECT e.position INTO first_recent FROM events e
         WHERE e.chain_id = c.id AND e.position >= c.first_position AND e.position < c.first_position + p_max_events
           AND e."timestamp" >= audit_retention_now() - make_interval(days => retention)
         ORDER BY e.position LIMIT 1;
        -- Never past a signed checkpoint: what is deleted is always covered by one (the sweep signs the head first).
        SELECT COALESCE(max(k.size), 0) INTO signed FROM checkpoints k WHERE k.chain_id = c.id;
        target := least(COALESCE(first_recent - 1, c.last_position), c.last_position, p_up_to, signed,
                        c.first_position - 1 + p_max_events);
        IF target < c.first_position THEN RETURN 0; END IF;
        p := target; -- leaves [0, p) are pruned: positions 1 … target

        -- The kept nodes (audit_merkle_node_kept) of levels 0 and 1 (those above are stored already),
        -- for [0, p) and [0, p − 1), from the events about to go or from a leaf an earlier prune kept.
        FOREACH q IN ARRAY ARRAY[p, p - 1] LOOP
          CONTINUE WHEN q < 1;
          IF q & 1 = 1 THEN
            INSERT INTO merkle_nodes (chain_id, level, "index", hash)
              SELECT c.id, 0, q - 1, sha256(decode('00', 'hex') || decode(e.hash, 'hex'))
                FROM events e WHERE e.chain_id = c.id AND e.position = q
              ON CONFLICT DO NOTHING;
          END IF;
          IF (q >> 1) & 1 = 1 THEN
            INSERT INTO merkle_nodes (chain_id, level, "index", hash)
              SELECT c.id, 1, (q >> 1) - 1, sha256(decode('01', 'hex') || string_agg(leaf.hash, ''::bytea ORDER BY leaf.idx))
                FROM (SELECT e.position - 1 AS idx, sha256(decode('00', 'hex') || decode(e.hash, 'hex')) AS hash
                        FROM events e WHERE e.chain_id = c.id AND e.position IN (2 * ((q >> 1) - 1) + 1, 2 * ((q >> 1) - 1) + 2)
                      UNION ALL
                      SELECT n."index", n.hash FROM merkle_nodes n
                       WHERE n.chain_id = c.id AND n.level = 0 AND n."index" IN (2 * ((q >> 1) - 1), 2 * ((q >> 1) - 1) + 1)) leaf
              HAVING count(*) = 2
              ON CONFLICT DO NOTHING;
          END IF;
        END LOOP;

        UPDATE chains ch SET first_position = target + 1, pruned_hash = e.hash, pruned_timestamp = e."timestamp"
          FROM events e WHERE ch.id = c.id AND e.chain_id = c.id AND e.position = target;
        DELETE FROM events e WHERE e.chain_id = c.id AND e.position >= c.first_position AND e.position <= target;
        GET DIAGNOSTICS deleted = ROW_COUNT;
        -- Per level, from the nodes the previous prune kept (below them nothing is left): the range
        -- never revisits the index entries of nodes deleted before (dead until VACUUM).
        lvl := 0;
        WHILE (p >> lvl) > 0 LOOP
          DELETE FROM merkle_nodes n
           WHERE n.chain_id = c.id AND n.level = lvl
             AND n."index" >= greatest(0, ((c.first_position - 1) >> lvl) - 2) AND n."index" < (p >> lvl)
             AND NOT audit_merkle_node_kept(lvl, n."index", p);
          lvl := lvl + 1;
        END LOOP;
        RETURN deleted;
      END $$`;

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
