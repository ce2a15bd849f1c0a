import { MigrationInterface, QueryRunner } from 'typeorm';
import { ERASE_EVENTS_1765900000000, ERASE_EVENTS_1766000000000 } from './functions/audit-erase-events';
import { UPDATE_GATE_1765600000000, UPDATE_GATE_1766000000000 } from './functions/audit-events-update-gate';
import { PRUNE_CHAIN_1765900000000, PRUNE_CHAIN_1766000000000 } from './functions/audit-prune-chain';

/** An event's, account's or chain's id as stored: the public id (`evt_`…, `acc_`…, `chn_`…) or the uuid's text. */
const ID_UUID = `
      CREATE FUNCTION audit_id_uuid(id text, prefix text) RETURNS uuid
        LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
        SELECT CASE WHEN left(id, 4) = prefix || '_' THEN audit_ulid_uuid(id) ELSE id::uuid END
      $$`;

/** A new erasure id: `era_` and a ULID (the time in milliseconds, then 80 random bits). */
const NEW_ERASURE_ID = `
      CREATE FUNCTION audit_new_erasure_id() RETURNS varchar
        LANGUAGE sql VOLATILE AS $$
        SELECT audit_uuid_ulid('era', (lpad(to_hex((extract(epoch FROM clock_timestamp()) * 1000)::bigint), 12, '0')
               || substr(md5(random()::text || clock_timestamp()::text), 1, 20))::uuid)
      $$`;

/** The field paths an event's stored erasure keeps commitments for (`actor`, `resource`, `context.<m>`), sorted. */
const ERASED_PATHS = `
      CREATE FUNCTION audit_erased_paths(erasure jsonb) RETURNS text[]
        LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
        SELECT coalesce(array_agg(p ORDER BY p), '{}') FROM (
          SELECT 'actor' AS p WHERE erasure -> 'commitments' ? 'actor'
          UNION ALL SELECT 'resource' WHERE erasure -> 'commitments' ? 'resource'
          UNION ALL SELECT 'context.' || k
            FROM jsonb_object_keys(CASE WHEN jsonb_typeof(erasure -> 'commitments' -> 'context') = 'object'
                                        THEN erasure -> 'commitments' -> 'context' ELSE '{}' END) k) paths
      $$`;

/**
 * The database's record of each erased field (an AFTER ROW trigger, ENABLE ALWAYS): whatever changed
 * the row, the paths it newly erased, under the erasure's id (the gate's value; null only when a
 * superuser lifted the gate some other way), with the session's role. It also refuses a row whose
 * erasure record is not one (a commitment that is no string, a context of commitments that is no
 * object, a commitment beside its value), so what it records is what was erased.
 */
const ERASURE_RECORD = `
      CREATE FUNCTION audit_events_erasure_record() RETURNS trigger
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

const APPEND_ONLY = ['erasure_events', 'erasures'] as const;
const OPERATIONS = ['UPDATE', 'DELETE', 'TRUNCATE'] as const;

/**
 * The database records every erasure itself (docs/contract.md §17, issue 37), as it records every prune
 * (1765000000000): whoever erases, the service's code or its database role calling audit_erase_events
 * by hand, leaves a record it cannot change, delete or skip, which verification holds the events against.
 *
 * - `erasure_events`: one row per event an erasure changed, with the field paths it newly erased, the
 *   erasure's id, the time and the session's role; written only by `trg_events_erasure_record`, an
 *   AFTER ROW trigger on events of the owner's (SECURITY DEFINER, ENABLE ALWAYS: it fires under
 *   `session_replication_role = replica` too), so a row changed by any path is recorded. Events erased
 *   before this migration get a row each with a null erasure id.
 * - `erasures` is written by audit_erase_events alone now (its key and reason nullable: an erasure by
 *   hand has neither), in the same transaction as the events, when it changed any; both tables refuse UPDATE, DELETE and
 *   TRUNCATE for every role, and every INSERT grant on them to another role than the owner is revoked
 *   (least-privilege.sql grants SELECT only).
 * - `audit_erase_events(account, rows, erasure)`: takes the erasure's record (`p_erasure`; null by
 *   hand), opens the update gate with the erasure's id (the gate now wants one), and writes the
 *   erasure's row; ids may be the public ones (`acc_`…, `evt_`…) or their uuids (audit_id_uuid), and
 *   so may audit_prune_chain's chain id.
 */
export class ErasureRecord1766000000000 implements MigrationInterface {
  name = 'ErasureRecord1766000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(ID_UUID);
    await q.query(NEW_ERASURE_ID);
    await q.query(ERASED_PATHS);
    await q.query(`
      CREATE TABLE erasure_events (
        id bigserial NOT NULL,
        erasure_id varchar(30),
        account_id uuid NOT NULL,
        chain_id uuid NOT NULL,
        position bigint NOT NULL,
        event_id uuid NOT NULL,
        fields text[] NOT NULL,
        erased_at timestamptz(3) NOT NULL,
        database_role text NOT NULL,
        CONSTRAINT pk_erasure_events PRIMARY KEY (id)
      )`);
    await q.query(`CREATE INDEX ix_erasure_events_chain_position ON erasure_events (chain_id, position)`);
    await q.query(`CREATE INDEX ix_erasure_events_erasure ON erasure_events (erasure_id)`);
    await q.query(`
      INSERT INTO erasure_events (erasure_id, account_id, chain_id, position, event_id, fields, erased_at, database_role)
      SELECT NULL, account_id, chain_id, position, id, audit_erased_paths(erasure), now(), session_user
        FROM events WHERE erasure IS NOT NULL AND cardinality(audit_erased_paths(erasure)) > 0`);
    await q.query(`ALTER TABLE erasures ALTER COLUMN key_id DROP NOT NULL, ALTER COLUMN reason DROP NOT NULL`);
    for (const table of APPEND_ONLY) {
      for (const op of OPERATIONS) {
        const trigger = `trg_${table}_reject_${op.toLowerCase()}`;
        await q.query(
          `CREATE TRIGGER ${trigger} BEFORE ${op} ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION audit_reject_change()`,
        );
        await q.query(`ALTER TABLE ${table} ENABLE ALWAYS TRIGGER ${trigger}`);
      }
      await revokeWrites(q, table);
    }
    await q.query(UPDATE_GATE_1766000000000);
    await q.query(ERASURE_RECORD);
    await q.query(`REVOKE ALL ON FUNCTION audit_events_erasure_record() FROM PUBLIC`);
    await q.query(
      `CREATE TRIGGER trg_events_erasure_record AFTER UPDATE ON events FOR EACH ROW EXECUTE FUNCTION audit_events_erasure_record()`,
    );
    await q.query(`ALTER TABLE events ENABLE ALWAYS TRIGGER trg_events_erasure_record`);

    // The service's role keeps EXECUTE: a new signature gets the grants the old one had.
    const grantees = await executeGrantees(q, 'audit_erase_events(varchar, jsonb)');
    await q.query(`DROP FUNCTION audit_erase_events(varchar, jsonb)`);
    await q.query(ERASE_EVENTS_1766000000000);
    await q.query(`REVOKE ALL ON FUNCTION audit_erase_events(varchar, jsonb, jsonb) FROM PUBLIC`);
    for (const role of grantees)
      await q.query(`GRANT EXECUTE ON FUNCTION audit_erase_events(varchar, jsonb, jsonb) TO ${quoteIdent(role)}`);
    await q.query(PRUNE_CHAIN_1766000000000);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(PRUNE_CHAIN_1765900000000);
    const grantees = await executeGrantees(q, 'audit_erase_events(varchar, jsonb, jsonb)');
    await q.query(`DROP FUNCTION audit_erase_events(varchar, jsonb, jsonb)`);
    await q.query(ERASE_EVENTS_1765900000000);
    await q.query(`REVOKE ALL ON FUNCTION audit_erase_events(varchar, jsonb) FROM PUBLIC`);
    for (const role of grantees)
      await q.query(`GRANT EXECUTE ON FUNCTION audit_erase_events(varchar, jsonb) TO ${quoteIdent(role)}`);
    await q.query(`DROP TRIGGER trg_events_erasure_record ON events`);
    await q.query(`DROP FUNCTION audit_events_erasure_record()`);
    await q.query(UPDATE_GATE_1765600000000);
    for (const table of APPEND_ONLY)
      for (const op of OPERATIONS) await q.query(`DROP TRIGGER trg_${table}_reject_${op.toLowerCase()} ON ${table}`);
    await q.query(`DELETE FROM erasures WHERE key_id IS NULL OR reason IS NULL`);
    await q.query(`ALTER TABLE erasures ALTER COLUMN key_id SET NOT NULL, ALTER COLUMN reason SET NOT NULL`);
    await q.query(`DROP TABLE erasure_events`);
    await q.query(`DROP FUNCTION audit_erased_paths(jsonb)`);
    await q.query(`DROP FUNCTION audit_new_erasure_id()`);
    await q.query(`DROP FUNCTION audit_id_uuid(text, text)`);
  }
}

/** Every role but the owner loses INSERT, UPDATE, DELETE and TRUNCATE on `table`. */
async function revokeWrites(q: QueryRunner, table: string): Promise<void> {
  const rows = (await q.query(
    `SELECT DISTINCT grantee FROM information_schema.role_table_grants
      WHERE table_schema = 'public' AND table_name = $1 AND privilege_type IN ('INSERT', 'UPDATE', 'DELETE', 'TRUNCATE')
        AND grantee <> (SELECT tableowner FROM pg_tables WHERE schemaname = 'public' AND tablename = $1)`,
    [table],
  )) as { grantee: string }[];
  for (const { grantee } of rows)
    await q.query(`REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ${table} FROM ${quoteIdent(grantee)}`);
}

/** The roles (other than the owner) granted EXECUTE on `signature`. */
async function executeGrantees(q: QueryRunner, signature: string): Promise<string[]> {
  const rows = (await q.query(
    `SELECT a.grantee::regrole::text AS grantee
       FROM pg_proc p, aclexplode(p.proacl) a
      WHERE p.oid = $1::regprocedure AND a.privilege_type = 'EXECUTE' AND a.grantee <> p.proowner AND a.grantee <> 0`,
    [signature],
  )) as { grantee: string }[];
  return rows.map((r) => r.grantee);
}

/** A role's name as an SQL identifier (regrole's text is already quoted where it must be). */
function quoteIdent(name: string): string {
  return /^[a-z_][a-z0-9_$]*$/.test(name) || name.startsWith('"') ? name : `"${name.replace(/"/g, '""')}"`;
}
