-- The privileges of the service's own PostgreSQL role: everything it needs, nothing more
-- (docs/verification.md §7). Run as the schema's owner (who ran the migrations), after them:
--   psql "$OWNER_URL" -v ON_ERROR_STOP=1 -v service_role=audit_service -f libs/database/sql/least-privilege.sql
-- The role must exist (CREATE ROLE audit_service LOGIN PASSWORD '…') and own nothing; start the
-- service as that role with DATABASE_MIGRATIONS=check. docker/docker-compose.yml's migrate service
-- and test/least-privilege.e2e-spec.ts apply this very file (with :"service_role" and :"DBNAME"
-- replaced by the role's and the database's names), so a missing grant fails the tests.
-- A new table is granted nothing by its migration: add its line here in the same change.
-- Deliberately absent: TRUNCATE, TRIGGER, REFERENCES, ownership, SET on session_replication_role,
-- any UPDATE or DELETE of events, checkpoints and merkle_nodes, and UPDATE of chains.first_position
-- and pruned_*: retention deletes only through audit_prune_chain (SECURITY DEFINER, the owner's).

GRANT CONNECT ON DATABASE :"DBNAME" TO :"service_role";
-- No temporary tables (attack finding 7): a temp table named like one of ours is searched first by
-- any function whose search_path does not end with pg_temp. The functions all name pg_temp last
-- (migration 1766300000000); this takes away the means as well. PUBLIC holds TEMPORARY on every new
-- database by default, and the role would inherit it from there: taken from PUBLIC too (the owner
-- keeps its own; a role that needs temp tables must be granted TEMPORARY by name).
REVOKE TEMPORARY ON DATABASE :"DBNAME" FROM PUBLIC;
REVOKE TEMPORARY ON DATABASE :"DBNAME" FROM :"service_role";
GRANT USAGE ON SCHEMA public TO :"service_role";

-- DATABASE_MIGRATIONS=check: which migrations ran.
GRANT SELECT ON typeorm_migrations TO :"service_role";

-- Append and read; never change (the triggers refuse it even to the owner).
GRANT SELECT, INSERT ON events, checkpoints, merkle_nodes TO :"service_role";

-- Statistics: the events' triggers maintain it as its owner (SECURITY DEFINER).
GRANT SELECT ON event_counts TO :"service_role";

-- Create chains and move their heads (an UPDATE privilege also lets it lock them FOR UPDATE/SHARE);
-- retention and legal hold settings.
GRANT SELECT, INSERT ON chains TO :"service_role";
GRANT UPDATE (last_position, last_hash, last_timestamp, retention_days, legal_hold, legal_hold_reason, legal_hold_by)
  ON chains TO :"service_role";

-- Accounts (API_KEYS bootstrap, keys over HTTP) and their retention and legal hold settings
-- (an UPDATE privilege also lets it lock an account FOR NO KEY UPDATE).
GRANT SELECT, INSERT ON accounts TO :"service_role";
GRANT UPDATE (retention_days, legal_hold, legal_hold_reason, legal_hold_by) ON accounts TO :"service_role";

-- The database's own record of prunes and setting changes, and its retention policy (hold release
-- delay, _audit floor): read only; the owner's triggers and audit_prune_chain write them (§9).
GRANT SELECT ON retention_log, retention_policy TO :"service_role";

-- Keys: API_KEYS followed at every start (scopes, origin; revoked when removed), keys over HTTP
-- (create, rotate: expires_at, revoke), and when each was last used.
GRANT SELECT, INSERT ON api_keys TO :"service_role";
GRANT UPDATE (scopes, origin, revoked_at, expires_at, last_used_at) ON api_keys TO :"service_role";

-- Idempotency-Key claims, replays and their expiry.
GRANT SELECT, INSERT, UPDATE, DELETE ON idempotency_keys TO :"service_role";

-- Stream destinations (docs/contract.md §16): created, changed, deleted through the API; their positions,
-- counts, errors and leases written by the delivery engine.
GRANT SELECT, INSERT, UPDATE, DELETE ON destinations TO :"service_role";

-- Erasure (docs/contract.md §17): events change only through audit_erase_events (SECURITY DEFINER, the
-- owner's; no UPDATE of events is granted). The database writes the record of every erasure itself
-- (erasures, by that function; erasure_events, by the owner's trigger on events: migration 1766000000000):
-- the service only reads them, and nothing it can do changes, deletes or skips a row.
GRANT EXECUTE ON FUNCTION audit_erase_events(varchar, jsonb, jsonb) TO :"service_role";
GRANT SELECT ON erasures, erasure_events TO :"service_role";

-- The checkpoint log (docs/contract.md §18): leaves stored with each chain checkpoint, the tree's nodes,
-- the log checkpoints and the witnesses' cosignatures; appended, never changed (UPDATE, DELETE and
-- TRUNCATE refused for every role by migration 1765800000000).
GRANT SELECT, INSERT ON checkpoint_log_leaves, checkpoint_log_nodes, checkpoint_log_checkpoints, checkpoint_log_cosignatures
  TO :"service_role";

-- Action schemas (docs/contract.md §19): versions are added (a deletion too: a version whose schema is
-- null), never changed or deleted (UPDATE, DELETE and TRUNCATE refused for every role by migration
-- 1766100000000); the sequence numbers them. Events carry schema_id and schema_valid with their INSERT.
GRANT SELECT, INSERT ON action_schemas TO :"service_role";
GRANT USAGE ON SEQUENCE action_schemas_id_seq TO :"service_role";
