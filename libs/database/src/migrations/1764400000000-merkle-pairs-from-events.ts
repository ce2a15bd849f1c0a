import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * merkle_nodes stops storing level 1 too (LOWEST_STORED_LEVEL in libs/hashing): the node (1, i)
 * is SHA-256(0x01 || the leaves of the events at positions 2i + 1 and 2i + 2), derived from two
 * rows `events` holds, as the leaves are since migration 1764300000000. It was half of the rows
 * left, each inserted under the chain's lock; reads derive it (MerkleNodesRepository
 * `merkleNodeAt`). As in 1764300000000, the delete trigger is disabled around the one delete,
 * inside the migration's transaction, and the level check then refuses a stored level 1.
 */
export class MerklePairsFromEvents1764400000000 implements MigrationInterface {
  name = 'MerklePairsFromEvents1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merkle_nodes DISABLE TRIGGER trg_merkle_nodes_reject_delete`);
    await q.query(`DELETE FROM merkle_nodes WHERE level = 1`);
    await q.query(`ALTER TABLE merkle_nodes ENABLE TRIGGER trg_merkle_nodes_reject_delete`);
    await q.query(`ALTER TABLE merkle_nodes DROP CONSTRAINT ck_merkle_nodes_level`);
    await q.query(`ALTER TABLE merkle_nodes ADD CONSTRAINT ck_merkle_nodes_level CHECK (level >= 2 AND level <= 62)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merkle_nodes DROP CONSTRAINT ck_merkle_nodes_level`);
    await q.query(`ALTER TABLE merkle_nodes ADD CONSTRAINT ck_merkle_nodes_level CHECK (level >= 1 AND level <= 62)`);
    await q.query(`
      INSERT INTO merkle_nodes (chain_id, level, "index", hash)
        SELECT e.chain_id, 1, (e.position - 1) / 2,
               sha256(decode('01', 'hex') || string_agg(sha256(decode('00', 'hex') || decode(e.hash, 'hex')), ''::bytea ORDER BY e.position))
          FROM events e JOIN chains c ON c.id = e.chain_id
         WHERE e.position <= c.last_position - c.last_position % 2
         GROUP BY e.chain_id, (e.position - 1) / 2`);
  }
}
