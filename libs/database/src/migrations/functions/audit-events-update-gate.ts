/**
 * Every text of audit_events_update_gate that a migration applied, oldest first, frozen as it was applied:
 * a database of some release runs each one, so none is ever edited. A migration that changes the
 * function adds its new text here and applies it in up(); the text before is what its down() restores.
 * The current text, and the promise it keeps, is in libs/database/src/schema/functions/erasure.ts.
 */

/** Applied by 1765600000000-erasure; 1766000000000-erasure-record replaced it (its down() restores this). */
export const UPDATE_GATE_1765600000000 = `
      CREATE OR REPLACE FUNCTION audit_events_update_gate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF current_setting('audit.erasure', true) IS DISTINCT FROM 'on' THEN
          RAISE EXCEPTION 'UPDATE on events is not allowed: the audit trail is append-only (an erasure goes through audit_erase_events)'
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NULL;
      END $$`;

/** Applied by 1766000000000-erasure-record (the current text). */
export const UPDATE_GATE_1766000000000 = `
      CREATE OR REPLACE FUNCTION audit_events_update_gate() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF coalesce(current_setting('audit.erasure', true), '') !~ '^era_[0-7][0-9A-HJKMNP-TV-Z]{25}$' THEN
          RAISE EXCEPTION 'UPDATE on events is not allowed: the audit trail is append-only (an erasure goes through audit_erase_events)'
            USING ERRCODE = 'insufficient_privilege';
        END IF;
        RETURN NULL;
      END $$`;
