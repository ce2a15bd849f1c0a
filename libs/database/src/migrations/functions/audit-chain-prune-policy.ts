/**
 * Every text of audit_chain_prune_policy that a migration applied, oldest first, frozen as it was applied:
 * a database of some release runs each one, so none is ever edited. A migration that changes the
 * function adds its new text here and applies it in up(); the text before is what its down() restores.
 * The current text, and the promise it keeps, is in libs/database/src/schema/functions/retention.ts.
 */

/** Applied by 1764800000000-retention; 1765000000000-retention-log replaced it (its down() restores this). */
export const PRUNE_POLICY_1764800000000 = `
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

/** Applied by 1765000000000-retention-log (the current text). */
export const PRUNE_POLICY_1765000000000 = `
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
      END $$`;
