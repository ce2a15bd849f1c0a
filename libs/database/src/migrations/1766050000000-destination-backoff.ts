import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A destination's retry backoff and its once-a-minute actions, in its row (docs/contract.md §16
 * "Failures"): before, the backoff lived in the worker delivering it, so each `replay`, `resume`,
 * change or pause, which starts a new worker, began again at attempt 1, and a tenant repeating one
 * of them sent a batch to a failing receiver at each request.
 *
 * - `retry_at`: no attempt before this time (set with each failed attempt, from the failure count
 *   `consecutive_failures`, which only an acknowledged batch clears now). A new worker, on this
 *   instance or another, after a restart too, first waits what is left of it.
 * - `replayed_at`, `resumed_at`: the last accepted `replay` and `resume`; another within a minute is
 *   `429 RATE_LIMITED`. Read and written under the row's lock with the database's clock, so the limit
 *   holds across instances.
 */
export class DestinationBackoff1766050000000 implements MigrationInterface {
  name = 'DestinationBackoff1766050000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE destinations
        ADD COLUMN retry_at    timestamptz(3),
        ADD COLUMN replayed_at timestamptz(3),
        ADD COLUMN resumed_at  timestamptz(3)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE destinations DROP COLUMN retry_at, DROP COLUMN replayed_at, DROP COLUMN resumed_at`);
  }
}
