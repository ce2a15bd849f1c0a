import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The checkpoint log (docs/contract.md §18): one RFC 9162 tree per deployment over every chain
 * checkpoint the service signed, its signed checkpoints, and the witnesses' cosignatures of them.
 *
 * - `checkpoint_log_leaves`: leaf `leaf_index` is a chain checkpoint's signed note, byte-identical
 *   to what GET …/checkpoint served, stored in the transaction that stores the checkpoint; indices
 *   are given in signing order under a transaction-level advisory lock, so they have no gap.
 * - `checkpoint_log_nodes`: every perfect subtree (level 0 = the leaf hashes), written by the one
 *   instance that signs log checkpoints, so proofs read O(log n) rows.
 * - `checkpoint_log_checkpoints`: each signed log checkpoint (size, root, note).
 * - `checkpoint_log_cosignatures`: the cosignature line a witness (its verifier key) gave a log
 *   checkpoint, verified before it was stored; a witness's largest size is where its next
 *   submission starts from.
 * Rows are never updated or deleted.
 */
export class CheckpointLog1765500000000 implements MigrationInterface {
  name = 'CheckpointLog1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE checkpoint_log_leaves (
        leaf_index  bigint         NOT NULL,
        chain_id    varchar(30)    NOT NULL,
        chain_size  bigint         NOT NULL,
        note        text           NOT NULL,
        leaf_hash   bytea          NOT NULL,
        created_at  timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT pk_checkpoint_log_leaves PRIMARY KEY (leaf_index),
        CONSTRAINT fk_checkpoint_log_leaves_chain FOREIGN KEY (chain_id) REFERENCES chains (id),
        CONSTRAINT ck_checkpoint_log_leaves_index CHECK (leaf_index >= 0),
        CONSTRAINT ck_checkpoint_log_leaves_hash CHECK (octet_length(leaf_hash) = 32)
      )`);
    await q.query(`CREATE INDEX ix_checkpoint_log_leaves_chain ON checkpoint_log_leaves (chain_id, leaf_index)`);
    await q.query(`
      CREATE TABLE checkpoint_log_nodes (
        level    smallint NOT NULL,
        "index"  bigint   NOT NULL,
        hash     bytea    NOT NULL,
        CONSTRAINT pk_checkpoint_log_nodes PRIMARY KEY (level, "index"),
        CONSTRAINT ck_checkpoint_log_nodes_level CHECK (level >= 0 AND level <= 62),
        CONSTRAINT ck_checkpoint_log_nodes_index CHECK ("index" >= 0),
        CONSTRAINT ck_checkpoint_log_nodes_hash CHECK (octet_length(hash) = 32)
      )`);
    await q.query(`
      CREATE TABLE checkpoint_log_checkpoints (
        size        bigint         NOT NULL,
        root        bytea          NOT NULL,
        note        text           NOT NULL,
        created_at  timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT pk_checkpoint_log_checkpoints PRIMARY KEY (size),
        CONSTRAINT ck_checkpoint_log_checkpoints_size CHECK (size > 0),
        CONSTRAINT ck_checkpoint_log_checkpoints_root CHECK (octet_length(root) = 32)
      )`);
    await q.query(`
      CREATE TABLE checkpoint_log_cosignatures (
        witness     text           NOT NULL,
        size        bigint         NOT NULL,
        line        text           NOT NULL,
        created_at  timestamptz(3) NOT NULL DEFAULT now(),
        CONSTRAINT pk_checkpoint_log_cosignatures PRIMARY KEY (witness, size),
        CONSTRAINT fk_checkpoint_log_cosignatures_checkpoint FOREIGN KEY (size) REFERENCES checkpoint_log_checkpoints (size)
      )`);
    await q.query(`CREATE INDEX ix_checkpoint_log_cosignatures_size ON checkpoint_log_cosignatures (size)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE checkpoint_log_cosignatures`);
    await q.query(`DROP TABLE checkpoint_log_checkpoints`);
    await q.query(`DROP TABLE checkpoint_log_nodes`);
    await q.query(`DROP TABLE checkpoint_log_leaves`);
  }
}
