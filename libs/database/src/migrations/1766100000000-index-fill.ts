import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The B-tree indexes of the append-only tables fill their pages (issue 41, docs/performance.md
 * "Storage per index"). PostgreSQL leaves 10 % of a B-tree leaf free (fillfactor 90) where a page
 * is split at its end (a key above every other: an event's id, an account's newest timestamp) and
 * when an index is built, room for the updates of a key in place. `events` and `merkle_nodes` have no
 * such updates (rows are only inserted; an erasure's UPDATE, rare, adds new entries anyway and splits a
 * page as any insert), so that room stays empty for ever. No plan changes: the keys are the same.
 *
 * Pages already written keep their fill; `REINDEX INDEX CONCURRENTLY <name>` packs them at 100 % without
 * blocking appends (docs/performance.md). Not done here: it would rebuild every index of every event on
 * upgrade, for a few percent.
 */
export const FULL_INDEXES = [
  'pk_events',
  'uq_events_chain_position',
  'ix_events_account_time',
  'ix_events_account_tail',
  'ix_events_account_actor',
  'ix_events_account_action',
  'ix_events_account_resource',
  'ix_events_chain_time',
  'ix_events_account_txid',
  'pk_merkle_nodes',
] as const;

export class IndexFill1766100000000 implements MigrationInterface {
  name = 'IndexFill1766100000000';

  async up(q: QueryRunner): Promise<void> {
    for (const index of FULL_INDEXES) await q.query(`ALTER INDEX ${index} SET (fillfactor = 100)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of FULL_INDEXES) await q.query(`ALTER INDEX ${index} RESET (fillfactor)`);
  }
}
