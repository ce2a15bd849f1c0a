import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Three indexes of `events` fill their pages (issue 41, docs/performance.md "Storage per index"):
 * `pk_events`, `ix_events_account_time` and `ix_events_account_txid`, whose keys grow with time (a ULID, an
 * account's newest timestamp, a transaction id), so their pages are split at the end. There PostgreSQL
 * leaves 10 % of the left page free (fillfactor 90) for updates in place, which events never have (rows
 * are only inserted; an erasure's UPDATE, rare, adds entries as an insert does). Not the other
 * indexes: those split in the middle fill their pages to half whatever the fillfactor, and
 * `ix_events_account_tail` grew from 68 to 86 B an event at 100 (a batch's events share a timestamp and
 * arrive in another order than their chains': they land in the full page before the end and split it).
 * No plan changes: the keys are the same.
 *
 * Pages already written keep their fill; `REINDEX INDEX CONCURRENTLY <name>` packs them without
 * blocking appends. Not done here: it would rebuild the indexes of every event on upgrade, for a few bytes each.
 */
const FULL_INDEXES = ['pk_events', 'ix_events_account_time', 'ix_events_account_txid'];

export class IndexFill1766100000000 implements MigrationInterface {
  name = 'IndexFill1766100000000';

  async up(q: QueryRunner): Promise<void> {
    for (const index of FULL_INDEXES) await q.query(`ALTER INDEX ${index} SET (fillfactor = 100)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of FULL_INDEXES) await q.query(`ALTER INDEX ${index} RESET (fillfactor)`);
  }
}
