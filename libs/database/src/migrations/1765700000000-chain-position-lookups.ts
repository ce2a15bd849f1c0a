import { MigrationInterface, QueryRunner } from 'typeorm';
import { HEAD_FORWARD_1765300000000, HEAD_FORWARD_1765700000000 } from './functions/audit-chain-head-forward';
import { TIME_ORDER_1764000000000, TIME_ORDER_1765700000000 } from './functions/audit-event-time-order';

/**
 * The append triggers find events by (chain_id, position) through `uq_events_chain_position`, at any
 * statistics and for the connection's whole life. Before, the chain-head trigger kept the plans its
 * connection made at its first head move (PL/pgSQL's cached generic plans): made on a new database,
 * a scan of `events`, or of every event of the chain through `ix_events_chain_time` (chain_id,
 * timestamp), which ties with the unique index wherever the planner expects one row per chain. One
 * connection of the witnessing bench's pool then read ~2,400 blocks per head UPDATE after a minute
 * of load (auto_explain: 73,000 buffers for 30 rows) and that service ingested at half speed beside
 * another on the same database. Now both triggers:
 * - look up as a range in the unique index's order (`BETWEEN x AND x ORDER BY position LIMIT 1`;
 *   `ORDER BY position` under the count), which only that index reads without a sort, so it wins
 *   the tie; the rows found are the same (a position is unique in its chain);
 * - run with `enable_seqscan = off`, so that a plan made while the table looked empty is no scan.
 * Their plans are then right whenever they are made, and stay cached: audit_event_time_order's
 * `force_custom_plan` (1764000000000's answer to the same trap), which planned its lookup for every
 * inserted row, goes. Measured against the build before (builds A/B, 200,000 seeded events): single
 * ingest 1.15×, batches 1.16×; `force_custom_plan` on the head trigger instead had cost 0.90×/0.87×.
 */
export class ChainPositionLookups1765700000000 implements MigrationInterface {
  name = 'ChainPositionLookups1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(HEAD_FORWARD_1765700000000);
    await q.query(TIME_ORDER_1765700000000);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(TIME_ORDER_1764000000000);
    await q.query(HEAD_FORWARD_1765300000000);
  }
}
