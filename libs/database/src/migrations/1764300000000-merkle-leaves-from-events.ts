import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * merkle_nodes stops storing level 0. A leaf is SHA-256(0x00 || event hash bytes) of the event at
 * position index + 1: a function of a row `events` already holds, so storing it only duplicated
 * it, and it was half of the table's rows, all inserted on each chain's critical path under its
 * lock. Reads derive the leaves from the events instead (MerkleNodesRepository `merkleNodeAt`).
 *
 * The append-only trigger refuses DELETE, so this migration, and only it, disables it around the
 * one delete, inside the migration's transaction (a failure leaves the trigger as it was). The
 * level check then refuses a stored leaf. `down` stores the leaves again, from the events.
 */
export class MerkleLeavesFromEvents1764300000000 implements MigrationInterface {
  name = 'MerkleLeavesFromEvents1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merkle_nodes DISABLE TRIGGER trg_merkle_nodes_reject_delete`);
    await q.query(`DELETE FROM merkle_nodes WHERE level = 0`);
    await q.query(`ALTER TABLE merkle_nodes ENABLE TRIGGER trg_merkle_nodes_reject_delete`);
    await q.query(`ALTER TABLE merkle_nodes DROP CONSTRAINT ck_merkle_nodes_level`);
    await q.query(`ALTER TABLE merkle_nodes ADD CONSTRAINT ck_merkle_nodes_level CHECK (level >= 1 AND level <= 62)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merkle_nodes DROP CONSTRAINT ck_merkle_nodes_level`);
    await q.query(`ALTER TABLE merkle_nodes ADD CONSTRAINT ck_merkle_nodes_level CHECK (level >= 0 AND level <= 62)`);
    await q.query(`
      INSERT INTO merkle_nodes (chain_id, level, "index", hash)
        SELECT e.chain_id, 0, e.position - 1, sha256(decode('00', 'hex') || decode(e.hash, 'hex'))
          FROM events e JOIN chains c ON c.id = e.chain_id
         WHERE e.position <= c.last_position`);
  }
}
