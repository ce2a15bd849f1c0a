import { declareFunction, declareTrigger } from './declare';

/*
 * Erasure: the only path that changes an event (audit_erase_events), the checks every changed row meets,
 * and the record the database writes of it (threat model P2, P3; docs/contract.md §17). The current text
 * of each function and trigger: the schema-drift check (npm run migration:check) holds the database to it.
 */

/**
 * P2: no UPDATE of events but through audit_erase_events, which opens this gate for its own statement
 * with the erasure's id (transaction-local `audit.erasure`).
 */
export const audit_events_update_gate = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_events_update_gate() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF coalesce(current_setting('audit.erasure', true), '') !~ '^era_[0-7][0-9A-HJKMNP-TV-Z]{25}$' THEN
      RAISE EXCEPTION 'UPDATE on events is not allowed: the audit trail is append-only (an erasure goes through audit_erase_events)'
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    RETURN NULL;
  END $$`,
);

/**
 * P2, P3: whoever passes the gate, every changed row must be a valid erasure of a version-2 event not
 * under legal hold: nothing hashed or placed changes, an erased field keeps its commitment, a commitment
 * kept before is kept as it was, the seed is gone.
 */
export const audit_events_erasure_check = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_events_erasure_check() RETURNS trigger LANGUAGE plpgsql AS $$
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
  END $$`,
);

/**
 * P2: the one way to change an event. SECURITY DEFINER, not executable by PUBLIC (least-privilege.sql
 * grants it to the service's role): erases the named events of one account, then writes the erasure's
 * row in `erasures` in the same transaction. Ids may be the public ones or their uuids.
 */
export const audit_erase_events = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_erase_events(p_account varchar, p_rows jsonb, p_erasure jsonb DEFAULT NULL) RETURNS integer
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog, pg_temp AS $$
  DECLARE
    v_account uuid := audit_id_uuid(p_account, 'acc');
    v_erasure varchar := coalesce(p_erasure ->> 'id', audit_new_erasure_id());
    n integer;
  BEGIN
    IF v_erasure !~ '^era_[0-7][0-9A-HJKMNP-TV-Z]{25}$' THEN
      RAISE EXCEPTION 'audit_erase_events: % is not an erasure id (era_ and a ULID)', v_erasure
        USING ERRCODE = 'invalid_parameter_value';
    END IF;
    PERFORM set_config('audit.erasure', v_erasure, true);
    UPDATE events e
       SET actor = CASE WHEN r.actor THEN NULL ELSE e.actor END,
           resource = CASE WHEN r.resource THEN NULL ELSE e.resource END,
           context = r.context,
           salt_seed = NULL,
           erasure = r.erasure
      FROM jsonb_to_recordset(p_rows) AS r(id text, actor boolean, resource boolean, context jsonb, erasure jsonb)
     WHERE e.id = audit_id_uuid(r.id, 'evt') AND e.account_id = v_account;
    GET DIAGNOSTICS n = ROW_COUNT;
    PERFORM set_config('audit.erasure', '', true);
    IF n = 0 THEN
      RETURN 0; -- nothing changed, nothing to record
    END IF;
    INSERT INTO erasures (id, account_id, key_id, events, skipped, fields, reason)
    VALUES (v_erasure, v_account, p_erasure ->> 'keyId', n, coalesce((p_erasure ->> 'skipped')::integer, 0),
            CASE WHEN jsonb_typeof(p_erasure -> 'fields') = 'array'
                 THEN ARRAY(SELECT jsonb_array_elements_text(p_erasure -> 'fields'))
                 ELSE ARRAY(SELECT DISTINCT f FROM erasure_events r, unnest(r.fields) f WHERE r.erasure_id = v_erasure ORDER BY f) END,
            p_erasure ->> 'reason');
    RETURN n;
  END $$`,
  { executableByPublic: false },
);

/**
 * P2: the database's own record of each erased field (erasure_events), whatever path changed the row;
 * and a row whose erasure record is not one (a commitment that is no string, or beside its value) is
 * refused, so what it records is what was erased.
 */
export const audit_events_erasure_record = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_events_erasure_record() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog, pg_temp AS $$
  DECLARE
    kept jsonb := CASE WHEN jsonb_typeof(NEW.erasure) = 'object' THEN NEW.erasure -> 'commitments' END;
    kept_context jsonb := CASE WHEN jsonb_typeof(kept -> 'context') = 'object' THEN kept -> 'context' ELSE '{}' END;
    paths text[];
  BEGIN
    -- What it records must be what was erased: a commitment (a string) for each erased field, and
    -- none beside a value (which would be recorded now and erased later, unrecorded).
    IF NEW.erasure IS NOT NULL AND (
         jsonb_typeof(kept) IS DISTINCT FROM 'object'
         OR coalesce(jsonb_typeof(kept -> 'actor'), 'string') <> 'string'
         OR coalesce(jsonb_typeof(kept -> 'resource'), 'string') <> 'string'
         OR coalesce(jsonb_typeof(kept -> 'context'), 'object') <> 'object'
         OR EXISTS (SELECT 1 FROM jsonb_each(kept_context) c WHERE jsonb_typeof(c.value) <> 'string')
         -- A commitment is a SHA-256 (64 lowercase hex), and the salts of the kept fields stay an object:
         -- anything else determines no hash (attack finding 8).
         OR coalesce(kept ->> 'actor', repeat('0', 64)) !~ '^[0-9a-f]{64}$'
         OR coalesce(kept ->> 'resource', repeat('0', 64)) !~ '^[0-9a-f]{64}$'
         OR EXISTS (SELECT 1 FROM jsonb_each_text(kept_context) c WHERE c.value !~ '^[0-9a-f]{64}$')
         OR jsonb_typeof(NEW.erasure -> 'salts') IS DISTINCT FROM 'object'
         OR (kept ? 'actor' AND NEW.actor IS NOT NULL)
         OR (kept ? 'resource' AND NEW.resource IS NOT NULL)
         OR EXISTS (SELECT 1 FROM jsonb_object_keys(kept_context) k WHERE coalesce(NEW.context ? k, false)))
    THEN
      RAISE EXCEPTION 'UPDATE of event %: an erasure keeps a commitment (64 lowercase hex) for each erased field, none beside a value, and its salts (an object)', NEW.id
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    paths := ARRAY(SELECT unnest(audit_erased_paths(NEW.erasure)) EXCEPT SELECT unnest(audit_erased_paths(OLD.erasure)));
    IF cardinality(paths) > 0 THEN
      INSERT INTO erasure_events (erasure_id, account_id, chain_id, position, event_id, fields, erased_at, database_role)
      VALUES (nullif(current_setting('audit.erasure', true), ''), NEW.account_id, NEW.chain_id, NEW.position, NEW.id,
              ARRAY(SELECT unnest(paths) ORDER BY 1), now(), session_user);
    END IF;
    RETURN NULL;
  END $$`,
  { executableByPublic: false },
);

/**
 * The field paths (`actor`, `resource`, `context.<member>`) an event's erasure record keeps commitments for.
 */
export const audit_erased_paths = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_erased_paths(erasure jsonb) RETURNS text[]
    LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(p ORDER BY p), '{}') FROM (
      SELECT 'actor' AS p WHERE erasure -> 'commitments' ? 'actor'
      UNION ALL SELECT 'resource' WHERE erasure -> 'commitments' ? 'resource'
      UNION ALL SELECT 'context.' || k
        FROM jsonb_object_keys(CASE WHEN jsonb_typeof(erasure -> 'commitments' -> 'context') = 'object'
                                    THEN erasure -> 'commitments' -> 'context' ELSE '{}' END) k) paths
  $$`,
);

/**
 * A new erasure id (`era_` and a ULID) for an erasure made by hand, without the service's record.
 */
export const audit_new_erasure_id = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_new_erasure_id() RETURNS varchar
    LANGUAGE sql VOLATILE AS $$
    SELECT audit_uuid_ulid('era', (lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
           || substr(md5(random()::text || clock_timestamp()::text), 1, 20))::uuid)
  $$`,
);

/**
 * An event's, account's or chain's id as stored: its public form (`evt_`…) or the uuid's text.
 */
export const audit_id_uuid = declareFunction(
  `
  CREATE OR REPLACE FUNCTION audit_id_uuid(id text, prefix text) RETURNS uuid
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT CASE WHEN left(id, 4) = prefix || '_' THEN audit_ulid_uuid(id) ELSE id::uuid END
  $$`,
);

/** An UPDATE of events needs the gate audit_erase_events opens. */
export const trgEventsRejectUpdate = declareTrigger(
  `CREATE TRIGGER trg_events_reject_update BEFORE UPDATE ON public.events FOR EACH STATEMENT EXECUTE FUNCTION audit_events_update_gate()`,
);

/** Each changed event is a valid erasure. */
export const trgEventsErasureCheck = declareTrigger(
  `CREATE TRIGGER trg_events_erasure_check BEFORE UPDATE ON public.events FOR EACH ROW EXECUTE FUNCTION audit_events_erasure_check()`,
);

/** Each erased field is recorded, under `session_replication_role = replica` too. */
export const trgEventsErasureRecord = declareTrigger(
  `CREATE TRIGGER trg_events_erasure_record AFTER UPDATE ON public.events FOR EACH ROW EXECUTE FUNCTION audit_events_erasure_record()`,
  'always',
);

export const FUNCTIONS = [
  audit_events_update_gate,
  audit_events_erasure_check,
  audit_erase_events,
  audit_events_erasure_record,
  audit_erased_paths,
  audit_new_erasure_id,
  audit_id_uuid,
];

export const TRIGGERS = [trgEventsRejectUpdate, trgEventsErasureCheck, trgEventsErasureRecord];
