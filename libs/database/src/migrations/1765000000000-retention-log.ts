import { MigrationInterface, QueryRunner } from 'typeorm';
import { PRUNE_POLICY_1764800000000, PRUNE_POLICY_1765000000000 } from './functions/audit-chain-prune-policy';
import { HOLD_LIFTED_RECENTLY_1765000000000 } from './functions/audit-hold-lifted-recently';
import { PRUNE_CHAIN_1764800000000, PRUNE_CHAIN_1765000000000 } from './functions/audit-prune-chain';

/** One row of retention_log, inserted by the owner's trigger functions (the service's role only reads the log). */
const LOG = `INSERT INTO retention_log (logged_at, kind, account_id, chain_id, retention_days, legal_hold_by,
               first_position, last_position, checkpoint_size, hold_release_delay_hours, database_role)`;

/**
 * A prune always leaves a trace, even for the service's own database role (docs/contract.md §14, issue 26).
 *
 * - `retention_log`: an append-only log (every UPDATE, DELETE and TRUNCATE refused, as for events)
 *   written only by SECURITY DEFINER trigger functions of the owner, ENABLE ALWAYS (they fire under
 *   `session_replication_role = replica` too): every change of a chain's or account's retention or
 *   legal hold (`retention`, `hold.placed`, `hold.lifted`, with who placed a hold), every move of a
 *   chain's `first_position` (`pruned`: the first and last positions it passed, and the smallest
 *   stored checkpoint that covers them), and every change of `retention_policy` (`policy`), each
 *   with the transaction's time and the session's database role. The service's role is granted
 *   SELECT on it only; nothing it can do skips a row: the rows come from triggers on the columns it
 *   writes, and it cannot move `first_position` but through audit_prune_chain.
 * - `retention_policy`: one row the database enforces, writable by the owner only:
 *   `hold_release_delay_hours` (HOLD_RELEASE_DELAY_HOURS) and `audit_min_retention_days`
 *   (AUDIT_MIN_RETENTION_DAYS). A service running as the owner writes its configured values at start.
 * - `legal_hold_by` on chains and accounts (`operator` or `admin`, null when not held): who placed a
 *   hold; the service lets only an operator lift an operator's. Holds placed before this migration
 *   are taken as an operator's (nobody loses a hold an operator may have placed).
 * - The policy (`trg_chains_prune_policy`) and `audit_prune_chain` now also refuse a chain whose own
 *   hold or whose account's was lifted less than `hold_release_delay_hours` ago on the sweep's clock
 *   (audit_retention_now: the owner's testing offset only), apply `audit_min_retention_days` as the
 *   floor of an `_audit` chain's effective retention (audit_effective_retention_days), and the
 *   policy refuses a `first_position` that no stored checkpoint covers.
 * - Chains pruned before this migration get one `pruned` row each, from 1 to first_position − 1.
 */
export class RetentionLog1765000000000 implements MigrationInterface {
  name = 'RetentionLog1765000000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of ['accounts', 'chains']) {
      await q.query(`ALTER TABLE ${table} ADD COLUMN legal_hold_by varchar(8)`);
      await q.query(`UPDATE ${table} SET legal_hold_by = 'operator' WHERE legal_hold`);
      await q.query(
        `ALTER TABLE ${table} ADD CONSTRAINT ck_${table}_legal_hold_by CHECK ((legal_hold AND legal_hold_by IN ('operator', 'admin')) OR (NOT legal_hold AND legal_hold_by IS NULL))`,
      );
    }

    await q.query(`
      CREATE TABLE retention_policy (
        id                        boolean NOT NULL DEFAULT true,
        hold_release_delay_hours  integer NOT NULL,
        audit_min_retention_days  integer NOT NULL,
        CONSTRAINT pk_retention_policy PRIMARY KEY (id),
        CONSTRAINT ck_retention_policy_one_row CHECK (id),
        CONSTRAINT ck_retention_policy_values CHECK (hold_release_delay_hours >= 0 AND hold_release_delay_hours <= 8784
          AND audit_min_retention_days >= 1 AND audit_min_retention_days <= 36500)
      )`);
    await q.query(
      `INSERT INTO retention_policy (id, hold_release_delay_hours, audit_min_retention_days) VALUES (true, 24, 365)`,
    );
    await q.query(`
      CREATE TABLE retention_log (
        id                        bigserial NOT NULL,
        logged_at                 timestamptz(3) NOT NULL,
        kind                      varchar(16) NOT NULL,
        account_id                varchar(30),
        chain_id                  varchar(30),
        retention_days            integer,
        legal_hold_by             varchar(8),
        first_position            bigint,
        last_position             bigint,
        checkpoint_size           bigint,
        hold_release_delay_hours  integer,
        database_role             text NOT NULL,
        CONSTRAINT pk_retention_log PRIMARY KEY (id),
        CONSTRAINT ck_retention_log_kind CHECK (kind IN ('retention', 'hold.placed', 'hold.lifted', 'pruned', 'policy'))
      )`);
    await q.query(`CREATE INDEX ix_retention_log_chain ON retention_log (chain_id, id)`);
    await q.query(`CREATE INDEX ix_retention_log_account ON retention_log (account_id, id)`);
    for (const table of ['retention_log', 'retention_policy']) {
      for (const op of ['UPDATE', 'DELETE', 'TRUNCATE']) {
        if (table === 'retention_policy' && op === 'UPDATE') continue;
        await q.query(
          `CREATE TRIGGER trg_${table}_reject_${op.toLowerCase()} BEFORE ${op} ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION audit_reject_change()`,
        );
        await q.query(`ALTER TABLE ${table} ENABLE ALWAYS TRIGGER trg_${table}_reject_${op.toLowerCase()}`);
      }
    }

    await q.query(`
      CREATE FUNCTION audit_hold_release_delay() RETURNS interval LANGUAGE sql STABLE AS $$
        SELECT make_interval(hours => COALESCE((SELECT p.hold_release_delay_hours FROM retention_policy p WHERE p.id), 24))
      $$`);
    // An _audit chain never keeps less than audit_min_retention_days; forever stays forever.
    await q.query(`
      CREATE FUNCTION audit_effective_retention_days(chain_name varchar, chain_days integer, account_days integer)
        RETURNS integer LANGUAGE sql STABLE AS $$
        SELECT CASE WHEN chain_name = '_audit' AND COALESCE(chain_days, account_days) IS NOT NULL
                    THEN greatest(COALESCE(chain_days, account_days),
                                  COALESCE((SELECT p.audit_min_retention_days FROM retention_policy p WHERE p.id), 365))
                    ELSE COALESCE(chain_days, account_days) END
      $$`);
    await q.query(HOLD_LIFTED_RECENTLY_1765000000000);

    await q.query(`
      CREATE FUNCTION audit_chain_retention_logged() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
      BEGIN
        IF NEW.retention_days IS DISTINCT FROM OLD.retention_days THEN
          ${LOG} VALUES (now(), 'retention', NEW.account_id, NEW.id, NEW.retention_days, NULL, NULL, NULL, NULL, NULL, session_user);
        END IF;
        IF OLD.legal_hold AND NOT NEW.legal_hold THEN
          ${LOG} VALUES (now(), 'hold.lifted', NEW.account_id, NEW.id, NULL, OLD.legal_hold_by, NULL, NULL, NULL, NULL, session_user);
        ELSIF NEW.legal_hold AND (NOT OLD.legal_hold OR NEW.legal_hold_by IS DISTINCT FROM OLD.legal_hold_by) THEN
          ${LOG} VALUES (now(), 'hold.placed', NEW.account_id, NEW.id, NULL, NEW.legal_hold_by, NULL, NULL, NULL, NULL, session_user);
        END IF;
        IF NEW.first_position > OLD.first_position THEN
          ${LOG} SELECT now(), 'pruned', NEW.account_id, NEW.id, NULL, NULL, OLD.first_position, NEW.first_position - 1,
                        (SELECT min(k.size) FROM checkpoints k WHERE k.chain_id = NEW.id AND k.size >= NEW.first_position - 1),
                        NULL, session_user;
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION audit_account_retention_logged() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
      BEGIN
        IF NEW.retention_days IS DISTINCT FROM OLD.retention_days THEN
          ${LOG} VALUES (now(), 'retention', NEW.id, NULL, NEW.retention_days, NULL, NULL, NULL, NULL, NULL, session_user);
        END IF;
        IF OLD.legal_hold AND NOT NEW.legal_hold THEN
          ${LOG} VALUES (now(), 'hold.lifted', NEW.id, NULL, NULL, OLD.legal_hold_by, NULL, NULL, NULL, NULL, session_user);
        ELSIF NEW.legal_hold AND (NOT OLD.legal_hold OR NEW.legal_hold_by IS DISTINCT FROM OLD.legal_hold_by) THEN
          ${LOG} VALUES (now(), 'hold.placed', NEW.id, NULL, NULL, NEW.legal_hold_by, NULL, NULL, NULL, NULL, session_user);
        END IF;
        RETURN NULL;
      END $$`);
    await q.query(`
      CREATE FUNCTION audit_retention_policy_logged() RETURNS trigger
        LANGUAGE plpgsql SECURITY DEFINER SET search_path = public, pg_catalog AS $$
      BEGIN
        ${LOG} VALUES (now(), 'policy', NULL, NULL, NEW.audit_min_retention_days, NULL, NULL, NULL, NULL,
                       NEW.hold_release_delay_hours, session_user);
        RETURN NULL;
      END $$`);
    for (const fn of [
      'audit_chain_retention_logged()',
      'audit_account_retention_logged()',
      'audit_retention_policy_logged()',
    ])
      await q.query(`REVOKE EXECUTE ON FUNCTION ${fn} FROM PUBLIC`);
    await q.query(`CREATE TRIGGER trg_chains_retention_log AFTER UPDATE OF retention_days, legal_hold, legal_hold_by, first_position
                   ON chains FOR EACH ROW EXECUTE FUNCTION audit_chain_retention_logged()`);
    await q.query(`CREATE TRIGGER trg_accounts_retention_log AFTER UPDATE OF retention_days, legal_hold, legal_hold_by
                   ON accounts FOR EACH ROW EXECUTE FUNCTION audit_account_retention_logged()`);
    await q.query(`CREATE TRIGGER trg_retention_policy_log AFTER UPDATE ON retention_policy
                   FOR EACH ROW EXECUTE FUNCTION audit_retention_policy_logged()`);
    await q.query(`ALTER TABLE chains ENABLE ALWAYS TRIGGER trg_chains_retention_log`);
    await q.query(`ALTER TABLE accounts ENABLE ALWAYS TRIGGER trg_accounts_retention_log`);
    await q.query(`ALTER TABLE retention_policy ENABLE ALWAYS TRIGGER trg_retention_policy_log`);

    await q.query(`
      ${LOG} SELECT now(), 'pruned', c.account_id, c.id, NULL, NULL, 1, c.first_position - 1,
                    (SELECT min(k.size) FROM checkpoints k WHERE k.chain_id = c.id AND k.size >= c.first_position - 1),
                    NULL, current_user
        FROM chains c WHERE c.first_position > 1 ORDER BY c.id`);

    await q.query(PRUNE_POLICY_1765000000000);

    await q.query(PRUNE_CHAIN_1765000000000);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(PRUNE_CHAIN_1764800000000);
    await q.query(PRUNE_POLICY_1764800000000);
    await q.query(`DROP TRIGGER trg_retention_policy_log ON retention_policy`);
    await q.query(`DROP TRIGGER trg_accounts_retention_log ON accounts`);
    await q.query(`DROP TRIGGER trg_chains_retention_log ON chains`);
    await q.query(`DROP FUNCTION audit_retention_policy_logged()`);
    await q.query(`DROP FUNCTION audit_account_retention_logged()`);
    await q.query(`DROP FUNCTION audit_chain_retention_logged()`);
    await q.query(`DROP FUNCTION audit_hold_lifted_recently(varchar, varchar, timestamptz)`);
    await q.query(`DROP FUNCTION audit_effective_retention_days(varchar, integer, integer)`);
    await q.query(`DROP FUNCTION audit_hold_release_delay()`);
    await q.query(`DROP TABLE retention_log`);
    await q.query(`DROP TABLE retention_policy`);
    for (const table of ['chains', 'accounts']) {
      await q.query(`ALTER TABLE ${table} DROP CONSTRAINT ck_${table}_legal_hold_by`);
      await q.query(`ALTER TABLE ${table} DROP COLUMN legal_hold_by`);
    }
  }
}
