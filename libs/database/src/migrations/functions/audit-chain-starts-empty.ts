/**
 * Every text of audit_chain_starts_empty that a migration applied, oldest first, frozen as it was applied:
 * a database of some release runs each one, so none is ever edited. A migration that changes the
 * function adds its new text here and applies it in up(); the text before is what its down() restores.
 * The current text, and the promise it keeps, is in libs/database/src/schema/functions/append-only.ts.
 */

/** Applied by 1763800000000-append-only-and-checkpoints; 1765300000000-binary-hashes replaced it (its down() restores this). */
export const STARTS_EMPTY_1763800000000 = `
      CREATE OR REPLACE FUNCTION audit_chain_starts_empty() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.last_position <> 0 OR NEW.last_hash <> repeat('0', 64) OR NEW.last_timestamp IS NOT NULL THEN
          RAISE EXCEPTION 'chain %: a new chain starts at position 0 with the genesis hash', NEW.id
            USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
      END $$`;

/** Applied by 1765300000000-binary-hashes (the current text). */
export const STARTS_EMPTY_1765300000000 = `
      CREATE OR REPLACE FUNCTION audit_chain_starts_empty() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.last_position <> 0 OR NEW.last_hash <> decode(repeat('00', 32), 'hex') OR NEW.last_timestamp IS NOT NULL THEN
          RAISE EXCEPTION 'chain %: a new chain starts at position 0 with the genesis hash', NEW.id
            USING ERRCODE = 'check_violation';
        END IF;
        RETURN NEW;
      END $$`;
