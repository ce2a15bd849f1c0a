import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each chain's RFC 9162 Merkle tree (docs/contract.md §10), stored as its perfect subtrees: the node
 * (level, index) is the hash of leaves [index·2^level, (index+1)·2^level), level 0 being the leaf
 * hash SHA-256(0x00 || event hash bytes) of the event at position index + 1. A chain of n events
 * has fewer than 2n nodes; any root or proof is O(log n) of them (libs/hashing/src/merkle.ts).
 *
 * Append-only like events: UPDATE, DELETE and TRUNCATE are refused, and the primary key refuses
 * a second hash for a node, so a stored tree can only grow.
 *
 * Existing chains get their trees here, from their events in position order (up to the head),
 * level by level in SQL (sha256() is core PostgreSQL ≥ 11, so this runs on PGlite too).
 */
export class MerkleNodes1764100000000 implements MigrationInterface {
  name = 'MerkleNodes1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE merkle_nodes (
        chain_id  varchar(30) NOT NULL,
        level     smallint    NOT NULL,
        "index"   bigint      NOT NULL,
        hash      bytea       NOT NULL,
        CONSTRAINT pk_merkle_nodes PRIMARY KEY (chain_id, level, "index"),
        CONSTRAINT fk_merkle_nodes_chain FOREIGN KEY (chain_id) REFERENCES chains (id),
        CONSTRAINT ck_merkle_nodes_level CHECK (level >= 0 AND level <= 62),
        CONSTRAINT ck_merkle_nodes_index CHECK ("index" >= 0),
        CONSTRAINT ck_merkle_nodes_hash CHECK (octet_length(hash) = 32)
      )`);
    await backfillMerkleNodes(q);
    for (const op of ['UPDATE', 'DELETE', 'TRUNCATE']) {
      await q.query(
        `CREATE TRIGGER trg_merkle_nodes_reject_${op.toLowerCase()} BEFORE ${op} ON merkle_nodes FOR EACH STATEMENT EXECUTE FUNCTION audit_reject_change()`,
      );
    }
  }

  async down(q: QueryRunner): Promise<void> {
    for (const op of ['update', 'delete', 'truncate'])
      await q.query(`DROP TRIGGER trg_merkle_nodes_reject_${op} ON merkle_nodes`);
    await q.query(`DROP TABLE merkle_nodes`);
  }
}

/**
 * Leaves from the events up to each chain's head, then each level's perfect parents from the
 * one below (a parent exists exactly when both its children do), until a level adds nothing.
 */
async function backfillMerkleNodes(q: QueryRunner): Promise<void> {
  await q.query(`
    DO $$
    DECLARE
      lvl smallint := 0;
      added bigint;
    BEGIN
      INSERT INTO merkle_nodes (chain_id, level, "index", hash)
        SELECT e.chain_id, 0, e.position - 1, sha256(decode('00', 'hex') || decode(e.hash, 'hex'))
          FROM events e JOIN chains c ON c.id = e.chain_id
         WHERE e.position <= c.last_position;
      LOOP
        INSERT INTO merkle_nodes (chain_id, level, "index", hash)
          SELECT l.chain_id, lvl + 1, l."index" / 2, sha256(decode('01', 'hex') || l.hash || r.hash)
            FROM merkle_nodes l
            JOIN merkle_nodes r ON r.chain_id = l.chain_id AND r.level = l.level AND r."index" = l."index" + 1
           WHERE l.level = lvl AND l."index" % 2 = 0;
        GET DIAGNOSTICS added = ROW_COUNT;
        EXIT WHEN added = 0;
        lvl := lvl + 1;
      END LOOP;
    END $$`);
}
