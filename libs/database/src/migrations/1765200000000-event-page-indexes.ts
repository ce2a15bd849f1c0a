import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The events table's ordered indexes, narrower and in the live tail's order (issue 28).
 *
 * - `ix_events_account_time (account_id, timestamp, id)` becomes `ix_events_account_tail (account_id,
 *   timestamp, chain_id, position)`: the order a live tail and a stream destination read a window in
 *   (`committedBetween`), so a page after a key is an index range that stops at the page's size. Before,
 *   such a page was planned as a bitmap scan of `ix_events_account_txid` over the whole window (stale
 *   statistics after a burst of appends: ~2.8 s a page after a 10-minute outage, docs/performance.md
 *   2026-11-28); with this index and the window's txid bound written as a filter, 0.8 ms on the same probe.
 *   A listing still reads it in (timestamp) order and sorts the few events of one millisecond by id
 *   (an incremental sort).
 * - The filter indexes (`actor`, `action`, `resource`, and `chain_id`) end in `timestamp`, no longer in `id`:
 *   the ties of one millisecond are sorted the same way, and each entry is 16–31 bytes shorter.
 *
 * Every index is built before the one it replaces is dropped, so no query goes without one.
 */
export class EventPageIndexes1765200000000 implements MigrationInterface {
  name = 'EventPageIndexes1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX ix_events_account_tail ON events (account_id, "timestamp", chain_id, position)`);
    await q.query(`DROP INDEX ix_events_account_time`);
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
    await q.query(`CREATE INDEX ix_events_account_time ON events (account_id, "timestamp", id)`);
    await q.query(`DROP INDEX ix_events_account_tail`);
    for (const column of ['actor', 'action', 'resource']) {
      await q.query(`DROP INDEX ix_events_account_${column}`);
      await q.query(`CREATE INDEX ix_events_account_${column} ON events (account_id, ${column}, "timestamp", id)`);
    }
    await q.query(`DROP INDEX ix_events_chain_time`);
    await q.query(`CREATE INDEX ix_events_chain_time ON events (chain_id, "timestamp", id)`);
  }
}
