import { MigrationInterface, QueryRunner } from 'typeorm';

const TABLES = [
  'checkpoint_log_leaves',
  'checkpoint_log_nodes',
  'checkpoint_log_checkpoints',
  'checkpoint_log_cosignatures',
] as const;
const OPERATIONS = ['UPDATE', 'DELETE', 'TRUNCATE'] as const;

/**
 * The checkpoint log (docs/contract.md §18, migration 1765500000000) is append-only like the events
 * and checkpoints: a statement trigger refuses UPDATE, DELETE and TRUNCATE of its leaves, nodes,
 * log checkpoints and cosignatures, for every role, and `ENABLE ALWAYS` keeps it firing under
 * `session_replication_role = replica` (as retention_log's since 1765000000000). The service only
 * inserts into them (least-privilege.sql grants SELECT and INSERT).
 */
export class CheckpointLogAppendOnly1765800000000 implements MigrationInterface {
  name = 'CheckpointLogAppendOnly1765800000000';

  async up(q: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      for (const op of OPERATIONS) {
        const trigger = `trg_${table}_reject_${op.toLowerCase()}`;
        await q.query(
          `CREATE TRIGGER ${trigger} BEFORE ${op} ON ${table} FOR EACH STATEMENT EXECUTE FUNCTION audit_reject_change()`,
        );
        await q.query(`ALTER TABLE ${table} ENABLE ALWAYS TRIGGER ${trigger}`);
      }
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const table of TABLES) {
      for (const op of OPERATIONS) await q.query(`DROP TRIGGER trg_${table}_reject_${op.toLowerCase()} ON ${table}`);
    }
  }
}
