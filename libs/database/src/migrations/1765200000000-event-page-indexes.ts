import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The events table's ordered indexes (issue 28): one for the live tail, narrower ones for the filters.
 *
 * - `ix_events_account_tail (account_id, timestamp, chain_id, position)`: the order a live tail and a
 *   stream destination read a window in (`committedBetween`), so a page after a key is an index range
 *   that stops at the page's size. Before, such a page was planned as a bitmap scan of
 *   `ix_events_account_txid` over the whole window (statistics that a burst of appends has not reached
 *   estimate it small), sorted for every page: ~2.8 s a page after a 10-minute outage (docs/performance.md,
 *   2026-11-28); with this index and the window's txid bound written as a filter, 0.8 ms on the same probe.
 *   `ix_events_account_time (account_id, timestamp, id)` stays: the listing without a filter, the most
 *   common read, is a range in page order (read through the tail's index with an incremental sort, a page
 *   took ~0.2 ms more: 0.86× the list throughput in the `builds` bench); and with it alone the tail's
 *   page is planned as a sort of everything after the key again.
 * - The filter indexes (`actor`, `action`, `resource`, and `chain_id`) end in `timestamp`, no longer in `id`:
 *   a page reads them in timestamp order and sorts one millisecond's events by id (an incremental sort of
 *   a few rows), and each entry is 16–31 bytes shorter.
 *
 * Every index is built before the one it replaces is dropped, so no query goes without one.
 */
export class EventPageIndexes1765200000000 implements MigrationInterface {
  name = 'EventPageIndexes1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX ix_events_account_tail ON events (account_id, "timestamp", chain_id, position)`);
    for (const column of ['actor', 'action', 'resource']) {
      await q.query(`ALTER INDEX ix_events_account_${column} RENAME TO ix_events_account_${column}_old`);
      await q.query(`CREATE INDEX ix_events_account_${column} ON events (account_id, ${column}, "timestamp")`);
      await q.query(`DROP INDEX ix_events_account_${column}_old`);
    }
    await q.query(`ALTER INDEX ix_events_chain_time RENAME TO ix_events_chain_time_old`);
    await q.query(`CREATE INDEX ix_events_chain_time ON events (chain_id, "timestamp")`);
    await q.query(`DROP INDEX ix_events_chain_time_old`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_events_account_tail`);
    for (const column of ['actor', 'action', 'resource']) {
      await q.query(`DROP INDEX ix_events_account_${column}`);
      await q.query(`CREATE INDEX ix_events_account_${column} ON events (account_id, ${column}, "timestamp", id)`);
    }
    await q.query(`DROP INDEX ix_events_chain_time`);
    await q.query(`CREATE INDEX ix_events_chain_time ON events (chain_id, "timestamp", id)`);
  }
}
