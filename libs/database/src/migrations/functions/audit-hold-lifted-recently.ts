/**
 * Every text of audit_hold_lifted_recently that a migration applied, oldest first, frozen as it was applied:
 * a database of some release runs each one, so none is ever edited. A migration that changes the
 * function adds its new text here and applies it in up(); the text before is what its down() restores.
 * The current text, and the promise it keeps, is in libs/database/src/schema/functions/retention.ts.
 */

/** Applied by 1765000000000-retention-log; 1765900000000-binary-ids replaced it (its down() restores this). */
export const HOLD_LIFTED_RECENTLY_1765000000000 = `
      CREATE OR REPLACE FUNCTION audit_hold_lifted_recently(p_chain_id varchar, p_account_id varchar, p_now timestamptz)
        RETURNS boolean LANGUAGE sql STABLE AS $$
        SELECT EXISTS (SELECT 1 FROM retention_log l WHERE l.chain_id = p_chain_id AND l.kind = 'hold.lifted'
                          AND l.logged_at > p_now - audit_hold_release_delay())
            OR EXISTS (SELECT 1 FROM retention_log l WHERE l.account_id = p_account_id AND l.chain_id IS NULL
                          AND l.kind = 'hold.lifted' AND l.logged_at > p_now - audit_hold_release_delay())
      $$`;

/** Applied by 1765900000000-binary-ids (the current text). */
export const HOLD_LIFTED_RECENTLY_1765900000000 = `
      CREATE OR REPLACE FUNCTION audit_hold_lifted_recently(p_chain_id uuid, p_account_id uuid, p_now timestamptz)
        RETURNS boolean LANGUAGE sql STABLE AS $$
        SELECT EXISTS (SELECT 1 FROM retention_log l WHERE l.chain_id = p_chain_id AND l.kind = 'hold.lifted'
                          AND l.logged_at > p_now - audit_hold_release_delay())
            OR EXISTS (SELECT 1 FROM retention_log l WHERE l.account_id = p_account_id AND l.chain_id IS NULL
                          AND l.kind = 'hold.lifted' AND l.logged_at > p_now - audit_hold_release_delay())
      $$`;
