import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * merkle_nodes loses its foreign key to chains. PostgreSQL checks a foreign key row by row (one
 * lookup of the chain per inserted node, about half of what inserting a node costs), and an
 * append inserts about two nodes per event on the one chain's critical path, under its lock. The
 * key could never fail there: nodes are written only in the transaction that has just locked the
 * chain's row FOR UPDATE, and chains are never deleted (trg_chains_reject_delete/truncate). A node
 * written by hand under an unknown chain id belongs to no chain: no proof, root or verification
 * ever reads it.
 */
export class MerkleNodesWithoutFk1764200000000 implements MigrationInterface {
  name = 'MerkleNodesWithoutFk1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE merkle_nodes DROP CONSTRAINT fk_merkle_nodes_chain`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE merkle_nodes ADD CONSTRAINT fk_merkle_nodes_chain FOREIGN KEY (chain_id) REFERENCES chains(id)`,
    );
  }
}
