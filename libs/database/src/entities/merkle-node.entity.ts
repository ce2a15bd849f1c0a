import { Check, Column, Entity, PrimaryColumn } from 'typeorm';
import { bigintAsNumber } from './bigint-number.transformer';
import { ulidAsUuid } from './ulid-uuid.transformer';

/**
 * One perfect subtree of a chain's RFC 9162 Merkle tree (migration 1764100000000): the hash of
 * leaves [index·2^level, (index+1)·2^level), the leaves being the events in position order. Appends
 * store levels ≥ 2 (LOWEST_STORED_LEVEL): a node below is derived from its one or two events
 * (migrations 1764300000000 and 1764400000000, MerkleNodesRepository `merkleNodeAt`), except over a
 * pruned range, where a prune stores the ones proofs still need (migration 1764800000000). Rows are never updated; only a prune deletes, nodes no proof needs. No foreign key to chains (migration
 * 1764200000000 says why): `chain_id` is the chain whose locked append wrote the node.
 */
@Entity({ name: 'merkle_nodes' })
@Check('ck_merkle_nodes_level', `level >= 0 AND level <= 62`)
@Check('ck_merkle_nodes_index', `"index" >= 0`)
@Check('ck_merkle_nodes_hash', `octet_length(hash) = 32`)
export class MerkleNodeEntity {
  @PrimaryColumn({
    name: 'chain_id',
    type: 'uuid',
    transformer: ulidAsUuid('chn'),
    primaryKeyConstraintName: 'pk_merkle_nodes',
  })
  chainId!: string;

  @PrimaryColumn({ type: 'smallint', primaryKeyConstraintName: 'pk_merkle_nodes' })
  level!: number;

  @PrimaryColumn({ type: 'bigint', transformer: bigintAsNumber, primaryKeyConstraintName: 'pk_merkle_nodes' })
  index!: number;

  /** SHA-256, 32 bytes. */
  @Column({ type: 'bytea' })
  hash!: Buffer;
}
