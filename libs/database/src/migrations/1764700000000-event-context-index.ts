import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `q`'s `context.<path>:value` terms (docs/contract.md §13) are containments, `context @> '{"a":{"b":v}}'`,
 * which a GIN index with the jsonb_path_ops operator class answers: one entry per path to a
 * leaf value (a hash of the path and the value), smaller and faster for `@>` than the default
 * jsonb_ops, which indexes every key too. Its price on the append path and on disk is measured in
 * docs/performance.md. fastupdate (the default) keeps inserts cheap: new entries go to a pending list
 * that autovacuum, or an insert that finds the list over gin_pending_list_limit, merges.
 */
export class EventContextIndex1764700000000 implements MigrationInterface {
  name = 'EventContextIndex1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX ix_events_context ON events USING gin (context jsonb_path_ops)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX ix_events_context`);
  }
}
