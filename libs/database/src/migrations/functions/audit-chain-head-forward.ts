/**
 * Every text of audit_chain_head_forward that a migration applied, oldest first, frozen as it was applied:
 * a database of some release runs each one, so none is ever edited. A migration that changes the
 * function adds its new text here and applies it in up(); the text before is what its down() restores.
 * The current text, and the promise it keeps, is in libs/database/src/schema/functions/append-only.ts.
 */

/** Applied by 1763800000000-append-only-and-checkpoints; 1765300000000-binary-hashes replaced it (its down() restores this). */
export const HEAD_FORWARD_1763800000000 = `
      CREATE OR REPLACE FUNCTION audit_chain_head_forward() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        appended bigint;
        beyond bigint;
        head record;
        first_link char(64);
      BEGIN
        IF NEW.id <> OLD.id OR NEW.account_id <> OLD.account_id OR NEW.name <> OLD.name OR NEW.created_at <> OLD.created_at THEN
          RAISE EXCEPTION 'chain %: id, account, name and creation time never change', OLD.id USING ERRCODE = 'check_violation';
        END IF;
        IF NEW.last_position = OLD.last_position
           AND NEW.last_hash = OLD.last_hash AND NEW.last_timestamp IS NOT DISTINCT FROM OLD.last_timestamp THEN
          RETURN NEW;
        END IF;
        IF NEW.last_position <= OLD.last_position THEN
          RAISE EXCEPTION 'chain %: the head cannot move from position % to %', OLD.id, OLD.last_position, NEW.last_position
            USING ERRCODE = 'check_violation';
        END IF;
        SELECT count(*) FILTER (WHERE e.position <= NEW.last_position), count(*) FILTER (WHERE e.position > NEW.last_position)
          INTO appended, beyond
          FROM events e WHERE e.chain_id = NEW.id AND e.position > OLD.last_position;
        IF appended <> NEW.last_position - OLD.last_position OR beyond <> 0 THEN
          RAISE EXCEPTION 'chain %: the head must move forward by exactly the % event(s) appended, not to position %',
            OLD.id, appended + beyond, NEW.last_position USING ERRCODE = 'check_violation';
        END IF;
        SELECT e.hash, e."timestamp" INTO head FROM events e WHERE e.chain_id = NEW.id AND e.position = NEW.last_position;
        SELECT e.previous_hash INTO first_link FROM events e WHERE e.chain_id = NEW.id AND e.position = OLD.last_position + 1;
        IF head.hash IS DISTINCT FROM NEW.last_hash OR head."timestamp" IS DISTINCT FROM NEW.last_timestamp
           OR first_link IS DISTINCT FROM OLD.last_hash THEN
          RAISE EXCEPTION 'chain %: the new head must be the hash and time of the event at position %, linked to the old head',
            OLD.id, NEW.last_position USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
      END $$`;

/** Applied by 1765300000000-binary-hashes; 1765700000000-chain-position-lookups replaced it (its down() restores this). */
export const HEAD_FORWARD_1765300000000 = `
      CREATE OR REPLACE FUNCTION audit_chain_head_forward() RETURNS trigger LANGUAGE plpgsql AS $$
      DECLARE
        appended bigint;
        beyond bigint;
        head record;
        first_link bytea;
      BEGIN
        IF NEW.id <> OLD.id OR NEW.account_id <> OLD.account_id OR NEW.name <> OLD.name OR NEW.created_at <> OLD.created_at THEN
          RAISE EXCEPTION 'chain %: id, account, name and creation time never change', OLD.id USING ERRCODE = 'check_violation';
        END IF;
        IF NEW.last_position = OLD.last_position
           AND NEW.last_hash = OLD.last_hash AND NEW.last_timestamp IS NOT DISTINCT FROM OLD.last_timestamp THEN
          RETURN NEW;
        END IF;
        IF NEW.last_position <= OLD.last_position THEN
          RAISE EXCEPTION 'chain %: the head cannot move from position % to %', OLD.id, OLD.last_position, NEW.last_position
            USING ERRCODE = 'check_violation';
        END IF;
        SELECT count(*) FILTER (WHERE e.position <= NEW.last_position), count(*) FILTER (WHERE e.position > NEW.last_position)
          INTO appended, beyond
          FROM events e WHERE e.chain_id = NEW.id AND e.position > OLD.last_position;
        IF appended <> NEW.last_position - OLD.last_position OR beyond <> 0 THEN
          RAISE EXCEPTION 'chain %: the head must move forward by exactly the % event(s) appended, not to position %',
            OLD.id, appended + beyond, NEW.last_position USING ERRCODE = 'check_violation';
        END IF;
        SELECT e.hash, e."timestamp" INTO head FROM events e WHERE e.chain_id = NEW.id AND e.position = NEW.last_position;
        SELECT e.previous_hash INTO first_link FROM events e WHERE e.chain_id = NEW.id AND e.position = OLD.last_position + 1;
        IF head.hash IS DISTINCT FROM NEW.last_hash OR head."timestamp" IS DISTINCT FROM NEW.last_timestamp
           OR first_link IS DISTINCT FROM OLD.last_hash THEN
          RAISE EXCEPTION 'chain %: the new head must be the hash and time of the event at position %, linked to the old head',
            OLD.id, NEW.last_position USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
      END $$`;

/** Applied by 1765700000000-chain-position-lookups (the current text). */
export const HEAD_FORWARD_1765700000000 = `
      CREATE OR REPLACE FUNCTION audit_chain_head_forward() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS $$
      DECLARE
        appended bigint;
        beyond bigint;
        head record;
        first_link bytea;
      BEGIN
        IF NEW.id <> OLD.id OR NEW.account_id <> OLD.account_id OR NEW.name <> OLD.name OR NEW.created_at <> OLD.created_at THEN
          RAISE EXCEPTION 'chain %: id, account, name and creation time never change', OLD.id USING ERRCODE = 'check_violation';
        END IF;
        IF NEW.last_position = OLD.last_position
           AND NEW.last_hash = OLD.last_hash AND NEW.last_timestamp IS NOT DISTINCT FROM OLD.last_timestamp THEN
          RETURN NEW;
        END IF;
        IF NEW.last_position <= OLD.last_position THEN
          RAISE EXCEPTION 'chain %: the head cannot move from position % to %', OLD.id, OLD.last_position, NEW.last_position
            USING ERRCODE = 'check_violation';
        END IF;
        SELECT count(*) FILTER (WHERE e.position <= NEW.last_position), count(*) FILTER (WHERE e.position > NEW.last_position)
          INTO appended, beyond
          FROM (SELECT e.position FROM events e WHERE e.chain_id = NEW.id AND e.position > OLD.last_position
                 ORDER BY e.position) e;
        IF appended <> NEW.last_position - OLD.last_position OR beyond <> 0 THEN
          RAISE EXCEPTION 'chain %: the head must move forward by exactly the % event(s) appended, not to position %',
            OLD.id, appended + beyond, NEW.last_position USING ERRCODE = 'check_violation';
        END IF;
        SELECT e.hash, e."timestamp" INTO head FROM events e WHERE e.chain_id = NEW.id
           AND e.position BETWEEN NEW.last_position AND NEW.last_position ORDER BY e.position LIMIT 1;
        SELECT e.previous_hash INTO first_link FROM events e WHERE e.chain_id = NEW.id
           AND e.position BETWEEN OLD.last_position + 1 AND OLD.last_position + 1 ORDER BY e.position LIMIT 1;
        IF head.hash IS DISTINCT FROM NEW.last_hash OR head."timestamp" IS DISTINCT FROM NEW.last_timestamp
           OR first_link IS DISTINCT FROM OLD.last_hash THEN
          RAISE EXCEPTION 'chain %: the new head must be the hash and time of the event at position %, linked to the old head',
            OLD.id, NEW.last_position USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
      END $$`;
