/**
 * Every text of audit_erase_events that a migration applied, oldest first, frozen as it was applied:
 * a database of some release runs each one, so none is ever edited. A migration that changes the
 * function adds its new text here and applies it in up(); the text before is what its down() restores.
 * The current text, and the promise it keeps, is in libs/database/src/schema/functions/erasure.ts.
 */

/** Applied by 1765600000000-erasure; 1765900000000-binary-ids replaced it (its down() restores this). */
export const ERASE_EVENTS_1765600000000 = `
      CREATE OR REPLACE FUNCTION audit_erase_events(p_account varchar, p_rows jsonb) RETURNS integer
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
      DECLARE
        n integer;
      BEGIN
        PERFORM set_config('audit.erasure', 'on', true);
        UPDATE events e
           SET actor = CASE WHEN r.actor THEN NULL ELSE e.actor END,
               resource = CASE WHEN r.resource THEN NULL ELSE e.resource END,
               context = r.context,
               salt_seed = NULL,
               erasure = r.erasure
          FROM jsonb_to_recordset(p_rows) AS r(id varchar, actor boolean, resource boolean, context jsonb, erasure jsonb)
         WHERE e.id = r.id AND e.account_id = p_account;
        GET DIAGNOSTICS n = ROW_COUNT;
        PERFORM set_config('audit.erasure', '', true);
        RETURN n;
      END $$`;

/** Applied by 1765900000000-binary-ids; 1766000000000-erasure-record replaced it (its down() restores this). */
export const ERASE_EVENTS_1765900000000 = `
      CREATE OR REPLACE FUNCTION audit_erase_events(p_account varchar, p_rows jsonb) RETURNS integer
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
      DECLARE
        n integer;
      BEGIN
        PERFORM set_config('audit.erasure', 'on', true);
        UPDATE events e
           SET actor = CASE WHEN r.actor THEN NULL ELSE e.actor END,
               resource = CASE WHEN r.resource THEN NULL ELSE e.resource END,
               context = r.context,
               salt_seed = NULL,
               erasure = r.erasure
          FROM jsonb_to_recordset(p_rows) AS r(id uuid, actor boolean, resource boolean, context jsonb, erasure jsonb)
         WHERE e.id = r.id AND e.account_id = p_account::uuid;
        GET DIAGNOSTICS n = ROW_COUNT;
        PERFORM set_config('audit.erasure', '', true);
        RETURN n;
      END $$`;

/** Applied by 1766000000000-erasure-record (the current text). */
export const ERASE_EVENTS_1766000000000 = `
      CREATE OR REPLACE FUNCTION audit_erase_events(p_account varchar, p_rows jsonb, p_erasure jsonb DEFAULT NULL) RETURNS integer
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
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
      END $$`;
