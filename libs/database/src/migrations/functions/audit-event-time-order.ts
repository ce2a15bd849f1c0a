/**
 * Every text of audit_event_time_order that a migration applied, oldest first, frozen as it was applied:
 * a database of some release runs each one, so none is ever edited. A migration that changes the
 * function adds its new text here and applies it in up(); the text before is what its down() restores.
 * The current text, and the promise it keeps, is in libs/database/src/schema/functions/append-only.ts.
 */

/** Applied by 1764000000000-timestamp-order; 1765700000000-chain-position-lookups replaced it (its down() restores this). */
export const TIME_ORDER_1764000000000 = `
      CREATE OR REPLACE FUNCTION audit_event_time_order() RETURNS trigger LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $$
      DECLARE
        previous timestamptz;
      BEGIN
        IF NEW."timestamp" > clock_timestamp() + interval '5 seconds' THEN
          RAISE EXCEPTION 'event %: timestamp % is later than the database clock allows (% plus 5 seconds)',
            NEW.id, to_char(NEW."timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') USING ERRCODE = 'check_violation';
        END IF;
        SELECT e."timestamp" INTO previous FROM events e WHERE e.chain_id = NEW.chain_id AND e.position = NEW.position - 1;
        IF previous IS NOT NULL AND NEW."timestamp" < previous THEN
          RAISE EXCEPTION 'event %: timestamp % is earlier than %, the timestamp of position % of its chain',
            NEW.id, to_char(NEW."timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(previous AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), NEW.position - 1 USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
      END $$`;

/** Applied by 1765700000000-chain-position-lookups (the current text). */
export const TIME_ORDER_1765700000000 = `
      CREATE OR REPLACE FUNCTION audit_event_time_order() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
      DECLARE
        previous timestamptz;
      BEGIN
        IF NEW."timestamp" > clock_timestamp() + interval '5 seconds' THEN
          RAISE EXCEPTION 'event %: timestamp % is later than the database clock allows (% plus 5 seconds)',
            NEW.id, to_char(NEW."timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') USING ERRCODE = 'check_violation';
        END IF;
        SELECT e."timestamp" INTO previous FROM events e WHERE e.chain_id = NEW.chain_id
           AND e.position BETWEEN NEW.position - 1 AND NEW.position - 1 ORDER BY e.position LIMIT 1;
        IF previous IS NOT NULL AND NEW."timestamp" < previous THEN
          RAISE EXCEPTION 'event %: timestamp % is earlier than %, the timestamp of position % of its chain',
            NEW.id, to_char(NEW."timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), to_char(previous AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), NEW.position - 1 USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
      END $$`;
