import { declareFunction, declareTrigger } from './declare';

/*
 * Retention and legal holds: the only path that deletes history (audit_prune_chain), the policy the
 * database applies to it whoever calls it, and the log it writes itself (threat model P2, P3;
 * docs/contract.md §14). The current text of each function and trigger: the schema-drift check
 * (npm run migration:check) holds the database to it.
 */

/**
 * The sweep's clock: the database's now() plus a testing offset that only audit_prune_chain sets, and
 * only for a session of the owner (RETENTION_CLOCK_OFFSET_SECONDS in tests).
 */
export const audit_retention_now = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_retention_now() RETURNS timestamptz LANGUAGE sql STABLE AS $$
    SELECT now() + make_interval(secs => COALESCE(NULLIF(current_setting('audit.retention_clock_offset_seconds', true), ''), '0')::bigint)
  $$`,
);

/**
 * P3: how long after a legal hold is lifted nothing of its chain is pruned yet (retention_policy, owner-only).
 */
export const audit_hold_release_delay = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_hold_release_delay() RETURNS interval LANGUAGE sql STABLE AS $$
    SELECT make_interval(hours => COALESCE((SELECT p.hold_release_delay_hours FROM retention_policy p WHERE p.id), 24))
  $$`,
);

/**
 * P3: an `_audit` chain never keeps less than audit_min_retention_days (retention_policy); forever stays forever.
 */
export const audit_effective_retention_days = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_effective_retention_days(chain_name varchar, chain_days integer, account_days integer)
    RETURNS integer LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN chain_name = '_audit' AND COALESCE(chain_days, account_days) IS NOT NULL
                THEN greatest(COALESCE(chain_days, account_days),
                              COALESCE((SELECT p.audit_min_retention_days FROM retention_policy p WHERE p.id), 365))
                ELSE COALESCE(chain_days, account_days) END
  $$`,
);

/**
 * P3: whether the chain's hold or its account's was lifted less than the release delay ago (retention_log).
 */
export const audit_hold_lifted_recently = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_hold_lifted_recently(p_chain_id uuid, p_account_id uuid, p_now timestamptz)
    RETURNS boolean LANGUAGE sql STABLE AS $$
    SELECT EXISTS (SELECT 1 FROM retention_log l WHERE l.chain_id = p_chain_id AND l.kind = 'hold.lifted'
                      AND l.logged_at > p_now - audit_hold_release_delay())
        OR EXISTS (SELECT 1 FROM retention_log l WHERE l.account_id = p_account_id AND l.chain_id IS NULL
                      AND l.kind = 'hold.lifted' AND l.logged_at > p_now - audit_hold_release_delay())
  $$`,
);

/**
 * P2, P3: a chain's first retained position moves only forward, never past the head, never under a
 * legal hold nor within the release delay after one, never for a chain kept forever, only past events
 * older than the effective retention, only as far as a stored checkpoint covers, and it records the
 * hash and time of the last event it passes (what the first retained event links to).
 */
export const audit_chain_prune_policy = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_chain_prune_policy() RETURNS trigger LANGUAGE plpgsql AS $$
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
    SELECT audit_effective_retention_days(NEW.name, NEW.retention_days, a.retention_days), NEW.legal_hold OR a.legal_hold
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
    IF audit_hold_lifted_recently(NEW.id, NEW.account_id, audit_retention_now()) THEN
      RAISE EXCEPTION 'chain %: its legal hold or its account''s was lifted less than % ago, nothing is pruned yet', OLD.id,
        audit_hold_release_delay() USING ERRCODE = 'insufficient_privilege';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM checkpoints k WHERE k.chain_id = NEW.id AND k.size >= NEW.first_position - 1) THEN
      RAISE EXCEPTION 'chain %: no stored checkpoint covers position %', OLD.id, NEW.first_position - 1
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NEW;
  END $$`,
);

/**
 * P2: a DELETE of events may take only events below their chain's first retained position (what the
 * policy above let a prune pass); anything else fails the statement.
 */
export const audit_events_deleted_pruned = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_events_deleted_pruned() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF EXISTS (SELECT 1 FROM gone g LEFT JOIN chains c ON c.id = g.chain_id
                WHERE c.id IS NULL OR g.position >= c.first_position) THEN
      RAISE EXCEPTION 'DELETE on events is not allowed: the audit trail is append-only (a retention prune deletes only below a chain''s first retained position)'
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NULL;
  END $$`,
);

/**
 * P2: which Merkle nodes over the pruned leaves [0, p) a prune keeps: those that make up [0, p) and
 * [0, p − 1), which every proof of a retained event needs and which bind the kept hash to the signed tree.
 */
export const audit_merkle_node_kept = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_merkle_node_kept(lvl integer, idx bigint, p bigint) RETURNS boolean
    LANGUAGE sql IMMUTABLE AS $$
    SELECT idx >= (p >> lvl)
        OR ((p >> lvl) & 1 = 1 AND idx = (p >> lvl) - 1)
        OR (p > 1 AND ((p - 1) >> lvl) & 1 = 1 AND idx = ((p - 1) >> lvl) - 1)
  $$`,
);

/**
 * P2: a DELETE of Merkle nodes may take only nodes no proof of a retained event needs.
 */
export const audit_merkle_nodes_deleted_unneeded = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_merkle_nodes_deleted_unneeded() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF EXISTS (SELECT 1 FROM gone g LEFT JOIN chains c ON c.id = g.chain_id
                WHERE c.id IS NULL OR audit_merkle_node_kept(g.level, g."index", c.first_position - 1)) THEN
      RAISE EXCEPTION 'DELETE on merkle_nodes is not allowed: the audit trail is append-only (a retention prune deletes only nodes no proof of a retained event needs)'
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NULL;
  END $$`,
);

/**
 * P2, P3: the one way to prune. SECURITY DEFINER (the service's role cannot delete events itself): under
 * the chain's lock it finds the longest prefix older than the effective retention, at most max_events,
 * never past the largest signed checkpoint nor `up_to`, refuses a chain whose hold was lifted within the
 * release delay, keeps the Merkle nodes proofs need, moves first_position (the policy and the log above
 * see it) and deletes the events and the nodes not kept. Only the owner's session may shift its clock.
 */
export const audit_prune_chain = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_prune_chain(p_chain_id varchar, p_up_to bigint, p_max_events integer, p_clock_offset_seconds bigint)
    RETURNS bigint LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog, pg_temp AS $$
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
    SELECT ch.id, ch.account_id, ch.name, ch.first_position, ch.last_position, ch.retention_days, ch.legal_hold
      INTO c FROM chains ch WHERE ch.id = audit_id_uuid(p_chain_id, 'chn') FOR UPDATE;
    IF NOT FOUND THEN RETURN 0; END IF;
    SELECT audit_effective_retention_days(c.name, c.retention_days, a.retention_days), c.legal_hold OR a.legal_hold
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
    -- Something would go: a hold lifted a moment ago (in this very transaction, say) refuses it.
    IF audit_hold_lifted_recently(c.id, c.account_id, audit_retention_now()) THEN
      RAISE EXCEPTION 'audit_prune_chain: chain %: its legal hold or its account''s was lifted less than % ago', audit_uuid_ulid('chn', c.id),
        audit_hold_release_delay() USING ERRCODE = 'insufficient_privilege';
    END IF;
    p := target; -- leaves [0, p) are pruned: positions 1 … target

    -- The kept nodes (audit_merkle_node_kept) of levels 0 and 1 (those above are stored already),
    -- for [0, p) and [0, p − 1), from the events about to go or from a leaf an earlier prune kept.
    FOREACH q IN ARRAY ARRAY[p, p - 1] LOOP
      CONTINUE WHEN q < 1;
      IF q & 1 = 1 THEN
        INSERT INTO merkle_nodes (chain_id, level, "index", hash)
          SELECT c.id, 0, q - 1, sha256(decode('00', 'hex') || e.hash)
            FROM events e WHERE e.chain_id = c.id AND e.position = q
          ON CONFLICT DO NOTHING;
      END IF;
      IF (q >> 1) & 1 = 1 THEN
        INSERT INTO merkle_nodes (chain_id, level, "index", hash)
          SELECT c.id, 1, (q >> 1) - 1, sha256(decode('01', 'hex') || string_agg(leaf.hash, ''::bytea ORDER BY leaf.idx))
            FROM (SELECT e.position - 1 AS idx, sha256(decode('00', 'hex') || e.hash) AS hash
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
  END $$`,
);

/**
 * P2: every change of a chain's retention or hold, and every prune, is logged in retention_log by the
 * database itself (SECURITY DEFINER: the service's role only reads the log).
 */
export const audit_chain_retention_logged = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_chain_retention_logged() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog, pg_temp AS $$
  BEGIN
    IF NEW.retention_days IS DISTINCT FROM OLD.retention_days THEN
      INSERT INTO retention_log (logged_at, kind, account_id, chain_id, retention_days, legal_hold_by,
           first_position, last_position, checkpoint_size, hold_release_delay_hours, database_role) VALUES (now(), 'retention', NEW.account_id, NEW.id, NEW.retention_days, NULL, NULL, NULL, NULL, NULL, session_user);
    END IF;
    IF OLD.legal_hold AND NOT NEW.legal_hold THEN
      INSERT INTO retention_log (logged_at, kind, account_id, chain_id, retention_days, legal_hold_by,
           first_position, last_position, checkpoint_size, hold_release_delay_hours, database_role) VALUES (now(), 'hold.lifted', NEW.account_id, NEW.id, NULL, OLD.legal_hold_by, NULL, NULL, NULL, NULL, session_user);
    ELSIF NEW.legal_hold AND (NOT OLD.legal_hold OR NEW.legal_hold_by IS DISTINCT FROM OLD.legal_hold_by) THEN
      INSERT INTO retention_log (logged_at, kind, account_id, chain_id, retention_days, legal_hold_by,
           first_position, last_position, checkpoint_size, hold_release_delay_hours, database_role) VALUES (now(), 'hold.placed', NEW.account_id, NEW.id, NULL, NEW.legal_hold_by, NULL, NULL, NULL, NULL, session_user);
    END IF;
    IF NEW.first_position > OLD.first_position THEN
      INSERT INTO retention_log (logged_at, kind, account_id, chain_id, retention_days, legal_hold_by,
           first_position, last_position, checkpoint_size, hold_release_delay_hours, database_role) SELECT now(), 'pruned', NEW.account_id, NEW.id, NULL, NULL, OLD.first_position, NEW.first_position - 1,
                    (SELECT min(k.size) FROM checkpoints k WHERE k.chain_id = NEW.id AND k.size >= NEW.first_position - 1),
                    NULL, session_user;
    END IF;
    RETURN NULL;
  END $$`,
  { executableByPublic: false },
);

/**
 * P2: every change of an account's retention or hold is logged in retention_log by the database itself.
 */
export const audit_account_retention_logged = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_account_retention_logged() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog, pg_temp AS $$
  BEGIN
    IF NEW.retention_days IS DISTINCT FROM OLD.retention_days THEN
      INSERT INTO retention_log (logged_at, kind, account_id, chain_id, retention_days, legal_hold_by,
           first_position, last_position, checkpoint_size, hold_release_delay_hours, database_role) VALUES (now(), 'retention', NEW.id, NULL, NEW.retention_days, NULL, NULL, NULL, NULL, NULL, session_user);
    END IF;
    IF OLD.legal_hold AND NOT NEW.legal_hold THEN
      INSERT INTO retention_log (logged_at, kind, account_id, chain_id, retention_days, legal_hold_by,
           first_position, last_position, checkpoint_size, hold_release_delay_hours, database_role) VALUES (now(), 'hold.lifted', NEW.id, NULL, NULL, OLD.legal_hold_by, NULL, NULL, NULL, NULL, session_user);
    ELSIF NEW.legal_hold AND (NOT OLD.legal_hold OR NEW.legal_hold_by IS DISTINCT FROM OLD.legal_hold_by) THEN
      INSERT INTO retention_log (logged_at, kind, account_id, chain_id, retention_days, legal_hold_by,
           first_position, last_position, checkpoint_size, hold_release_delay_hours, database_role) VALUES (now(), 'hold.placed', NEW.id, NULL, NULL, NEW.legal_hold_by, NULL, NULL, NULL, NULL, session_user);
    END IF;
    RETURN NULL;
  END $$`,
  { executableByPublic: false },
);

/**
 * P2, P3: every change of the retention policy (release delay, `_audit` minimum) is logged.
 */
export const audit_retention_policy_logged = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_retention_policy_logged() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog, pg_temp AS $$
  BEGIN
    INSERT INTO retention_log (logged_at, kind, account_id, chain_id, retention_days, legal_hold_by,
           first_position, last_position, checkpoint_size, hold_release_delay_hours, database_role) VALUES (now(), 'policy', NULL, NULL, NEW.audit_min_retention_days, NULL, NULL, NULL, NULL,
                   NEW.hold_release_delay_hours, session_user);
    RETURN NULL;
  END $$`,
  { executableByPublic: false },
);

/** A prune moves first_position only as the policy allows. */
export const trgChainsPrunePolicy = declareTrigger(
  `CREATE TRIGGER trg_chains_prune_policy BEFORE UPDATE ON public.chains FOR EACH ROW EXECUTE FUNCTION audit_chain_prune_policy()`,
);

/** Events are deleted only below a chain's first retained position. */
export const trgEventsRejectDelete = declareTrigger(
  `CREATE TRIGGER trg_events_reject_delete AFTER DELETE ON public.events REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION audit_events_deleted_pruned()`,
);

/** Merkle nodes are deleted only where no proof needs them. */
export const trgMerkleNodesRejectDelete = declareTrigger(
  `CREATE TRIGGER trg_merkle_nodes_reject_delete AFTER DELETE ON public.merkle_nodes REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION audit_merkle_nodes_deleted_unneeded()`,
);

/** Logs a chain's retention, hold and prunes, under `session_replication_role = replica` too. */
export const trgChainsRetentionLog = declareTrigger(
  `CREATE TRIGGER trg_chains_retention_log AFTER UPDATE OF retention_days, legal_hold, legal_hold_by, first_position ON public.chains FOR EACH ROW EXECUTE FUNCTION audit_chain_retention_logged()`,
  'always',
);

/** Logs an account's retention and hold, always. */
export const trgAccountsRetentionLog = declareTrigger(
  `CREATE TRIGGER trg_accounts_retention_log AFTER UPDATE OF retention_days, legal_hold, legal_hold_by ON public.accounts FOR EACH ROW EXECUTE FUNCTION audit_account_retention_logged()`,
  'always',
);

/** Logs a change of the policy, always. */
export const trgRetentionPolicyLog = declareTrigger(
  `CREATE TRIGGER trg_retention_policy_log AFTER UPDATE ON public.retention_policy FOR EACH ROW EXECUTE FUNCTION audit_retention_policy_logged()`,
  'always',
);

export const FUNCTIONS = [
  audit_retention_now,
  audit_hold_release_delay,
  audit_effective_retention_days,
  audit_hold_lifted_recently,
  audit_chain_prune_policy,
  audit_events_deleted_pruned,
  audit_merkle_node_kept,
  audit_merkle_nodes_deleted_unneeded,
  audit_prune_chain,
  audit_chain_retention_logged,
  audit_account_retention_logged,
  audit_retention_policy_logged,
];

export const TRIGGERS = [
  trgChainsPrunePolicy,
  trgEventsRejectDelete,
  trgMerkleNodesRejectDelete,
  trgChainsRetentionLog,
  trgAccountsRetentionLog,
  trgRetentionPolicyLog,
];
