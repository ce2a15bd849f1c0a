/**
 * Every text of audit_prune_chain that a migration applied, oldest first, frozen as it was applied:
 * a database of some release runs each one, so none is ever edited. A migration that changes the
 * function adds its new text here and applies it in up(); the text before is what its down() restores.
 * The current text, and the promise it keeps, is in libs/database/src/schema/functions/retention.ts.
 */

/** Applied by 1764800000000-retention; 1765000000000-retention-log replaced it (its down() restores this). */
export const PRUNE_CHAIN_1764800000000 = `
      CREATE OR REPLACE FUNCTION audit_prune_chain(p_chain_id varchar, p_up_to bigint, p_max_events integer, p_clock_offset_seconds bigint)
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

/** Applied by 1765000000000-retention-log; 1765300000000-binary-hashes replaced it (its down() restores this). */
export const PRUNE_CHAIN_1765000000000 = `
      CREATE OR REPLACE FUNCTION audit_prune_chain(p_chain_id varchar, p_up_to bigint, p_max_events integer, p_clock_offset_seconds bigint)
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
        SELECT ch.id, ch.account_id, ch.name, ch.first_position, ch.last_position, ch.retention_days, ch.legal_hold
          INTO c FROM chains ch WHERE ch.id = p_chain_id FOR UPDATE;
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
          RAISE EXCEPTION 'audit_prune_chain: chain %: its legal hold or its account''s was lifted less than % ago', c.id,
            audit_hold_release_delay() USING ERRCODE = 'insufficient_privilege';
        END IF;
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

/** Applied by 1765300000000-binary-hashes; 1765900000000-binary-ids replaced it (its down() restores this). */
export const PRUNE_CHAIN_1765300000000 = `
      CREATE OR REPLACE FUNCTION audit_prune_chain(p_chain_id varchar, p_up_to bigint, p_max_events integer, p_clock_offset_seconds bigint)
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
        SELECT ch.id, ch.account_id, ch.name, ch.first_position, ch.last_position, ch.retention_days, ch.legal_hold
          INTO c FROM chains ch WHERE ch.id = p_chain_id FOR UPDATE;
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
          RAISE EXCEPTION 'audit_prune_chain: chain %: its legal hold or its account''s was lifted less than % ago', c.id,
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
      END $$`;

/** Applied by 1765900000000-binary-ids; 1766000000000-erasure-record replaced it (its down() restores this). */
export const PRUNE_CHAIN_1765900000000 = `
      CREATE OR REPLACE FUNCTION audit_prune_chain(p_chain_id varchar, p_up_to bigint, p_max_events integer, p_clock_offset_seconds bigint)
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
        SELECT ch.id, ch.account_id, ch.name, ch.first_position, ch.last_position, ch.retention_days, ch.legal_hold
          INTO c FROM chains ch WHERE ch.id = p_chain_id::uuid FOR UPDATE;
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
      END $$`;

/** Applied by 1766000000000-erasure-record (the current text). */
export const PRUNE_CHAIN_1766000000000 = `
      CREATE OR REPLACE FUNCTION audit_prune_chain(p_chain_id varchar, p_up_to bigint, p_max_events integer, p_clock_offset_seconds bigint)
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
      END $$`;
