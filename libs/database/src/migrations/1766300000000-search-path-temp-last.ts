import { MigrationInterface, QueryRunner } from 'typeorm';
import { ERASURE_RECORD_1766000000000, ERASURE_RECORD_1766300000000 } from './functions/audit-events-erasure-record';

/**
 * Attack finding 7 (P3, P2): every function that sets a search_path set `public, pg_catalog`, and a
 * search_path that does not name pg_temp searches it FIRST for tables. A role with TEMP (the service's
 * had it through PUBLIC) created temp tables `chains`, `accounts`, `erasures`, `erasure_events`, and
 * audit_erase_events (SECURITY DEFINER) read the legal hold from its own `chains` and wrote the
 * erasure's record into its own tables. Now pg_temp is named LAST on each of them, so temp tables are
 * searched after public and pg_catalog (the documented rule for SECURITY DEFINER functions).
 * least-privilege.sql revokes TEMPORARY besides, and the drift check refuses a function whose
 * search_path does not end with pg_temp.
 *
 * Attack finding 8 (P2, P6): audit_events_erasure_record accepted an erasure keeping
 * `{"commitments":{"actor":"c0ffee"}}` (a short commitment, no salts), which determines no hash. It now
 * refuses a commitment that is not 64 lowercase hex and an erasure without its salts object (what the
 * service's erasures always write).
 */
const FUNCTIONS = [
  'audit_event_counts_added()',
  'audit_event_counts_removed()',
  'audit_erase_events(varchar, jsonb, jsonb)',
  'audit_events_erasure_record()',
  'audit_prune_chain(varchar, bigint, integer, bigint)',
  'audit_chain_retention_logged()',
  'audit_account_retention_logged()',
  'audit_retention_policy_logged()',
];

export class SearchPathTempLast1766300000000 implements MigrationInterface {
  name = 'SearchPathTempLast1766300000000';

  async up(q: QueryRunner): Promise<void> {
    for (const fn of FUNCTIONS) await q.query(`ALTER FUNCTION ${fn} SET search_path = public, pg_catalog, pg_temp`);
    await q.query(ERASURE_RECORD_1766300000000);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(ERASURE_RECORD_1766000000000);
    for (const fn of FUNCTIONS) await q.query(`ALTER FUNCTION ${fn} SET search_path = public, pg_catalog`);
  }
}
