import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The live tail (docs/contract.md §13) reads events by the transaction that inserted them: `txid` is that
 * transaction's 64-bit id (`pg_current_xact_id()`, the same in every row of one append), set by the
 * column's default so no insert path can forget it. A stream compares it with two snapshots
 * (`pg_visible_in_snapshot`): what was committed between them, however late a transaction
 * committed after it started. Rows from before this migration keep null: committed before any
 * stream could start, no stream reads them. `ix_events_account_txid` finds an account's
 * recent transactions (txid ≥ the older snapshot's xmin).
 *
 * ADD COLUMN without a default and then SET DEFAULT: the table is not rewritten.
 */
export class EventTransactionIds1764600000000 implements MigrationInterface {
  name = 'EventTransactionIds1764600000000';

  async up(q: QueryRunner): Promise<void> {
    // A function, so the default has no cast (TypeORM's schema comparison strips casts from defaults).
    await q.query(`CREATE FUNCTION audit_current_txid() RETURNS bigint LANGUAGE sql VOLATILE
                   AS $$ SELECT pg_current_xact_id()::text::bigint $$`);
    await q.query(`ALTER TABLE events ADD COLUMN txid bigint`);
    await q.query(`ALTER TABLE events ALTER COLUMN txid SET DEFAULT audit_current_txid()`);
    await q.query(`CREATE INDEX ix_events_account_txid ON events (account_id, txid)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_events_account_txid`);
    await q.query(`ALTER TABLE events DROP COLUMN txid`);
    await q.query(`DROP FUNCTION audit_current_txid()`);
  }
}
