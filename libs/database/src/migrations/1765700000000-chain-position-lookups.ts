import { MigrationInterface, QueryRunner } from 'typeorm';
import { HEAD_FORWARD_1763800000000 } from './1763800000000-append-only-and-checkpoints';
import { TIME_ORDER_1764000000000 } from './1764000000000-timestamp-order';
import { edited } from './1765000000000-retention-log';

/** audit_chain_head_forward as 1765300000000 left it. */
const HEAD_FORWARD_1765300000000 = edited(HEAD_FORWARD_1763800000000, [
  ['CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION'],
  ['first_link char(64);', 'first_link bytea;'],
]);
const TIME_ORDER = TIME_ORDER_1764000000000.replace('CREATE FUNCTION', 'CREATE OR REPLACE FUNCTION');

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
    await q.query(
      edited(HEAD_FORWARD_1765300000000, [
        [
          'audit_chain_head_forward() RETURNS trigger LANGUAGE plpgsql AS',
          'audit_chain_head_forward() RETURNS trigger LANGUAGE plpgsql SET enable_seqscan = off AS',
        ],
        [
          'FROM events e WHERE e.chain_id = NEW.id AND e.position > OLD.last_position;',
          `FROM (SELECT e.position FROM events e WHERE e.chain_id = NEW.id AND e.position > OLD.last_position
                 ORDER BY e.position) e;`,
        ],
        [
          'WHERE e.chain_id = NEW.id AND e.position = NEW.last_position;',
          `WHERE e.chain_id = NEW.id
           AND e.position BETWEEN NEW.last_position AND NEW.last_position ORDER BY e.position LIMIT 1;`,
        ],
        [
          'WHERE e.chain_id = NEW.id AND e.position = OLD.last_position + 1;',
          `WHERE e.chain_id = NEW.id
           AND e.position BETWEEN OLD.last_position + 1 AND OLD.last_position + 1 ORDER BY e.position LIMIT 1;`,
        ],
      ]),
    );
    await q.query(
      edited(TIME_ORDER, [
        ['SET plan_cache_mode = force_custom_plan', 'SET enable_seqscan = off'],
        [
          'WHERE e.chain_id = NEW.chain_id AND e.position = NEW.position - 1;',
          `WHERE e.chain_id = NEW.chain_id
           AND e.position BETWEEN NEW.position - 1 AND NEW.position - 1 ORDER BY e.position LIMIT 1;`,
        ],
      ]),
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(TIME_ORDER);
    await q.query(HEAD_FORWARD_1765300000000);
  }
}
