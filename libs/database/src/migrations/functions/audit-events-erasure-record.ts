/**
 * audit_events_erasure_record (the AFTER UPDATE trigger on events that records each erased field) as
 * each migration left it. 1766000000000 created it; 1766300000000 refuses a commitment that is not
 * 64 lowercase hex and an erasure without its salts object, and names pg_temp last in its search_path.
 */
export const ERASURE_RECORD_1766000000000 = `
  CREATE OR REPLACE FUNCTION audit_events_erasure_record() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
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
         OR (kept ? 'actor' AND NEW.actor IS NOT NULL)
         OR (kept ? 'resource' AND NEW.resource IS NOT NULL)
         OR EXISTS (SELECT 1 FROM jsonb_object_keys(kept_context) k WHERE coalesce(NEW.context ? k, false)))
    THEN
      RAISE EXCEPTION 'UPDATE of event %: an erasure keeps a commitment (a string) for each erased field, and none beside a value', NEW.id
        USING ERRCODE = 'insufficient_privilege';
    END IF;
    paths := ARRAY(SELECT unnest(audit_erased_paths(NEW.erasure)) EXCEPT SELECT unnest(audit_erased_paths(OLD.erasure)));
    IF cardinality(paths) > 0 THEN
      INSERT INTO erasure_events (erasure_id, account_id, chain_id, position, event_id, fields, erased_at, database_role)
      VALUES (nullif(current_setting('audit.erasure', true), ''), NEW.account_id, NEW.chain_id, NEW.position, NEW.id,
              ARRAY(SELECT unnest(paths) ORDER BY 1), now(), session_user);
    END IF;
    RETURN NULL;
  END $$`;

export const ERASURE_RECORD_1766300000000 = `
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
  END $$`;
