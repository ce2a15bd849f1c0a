import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { frontierIds, MerkleNode, NodeId, NodeReader } from '@app/hashing';
import { Db } from '../transaction-runner';

interface NodeRow {
  level: number;
  index: string;
  hash: Buffer;
}

/**
 * Every query of the `merkle_nodes` table: each chain's stored perfect subtrees (level, index).
 * Methods take the transaction's `db` last, defaulting to the pool.
 */
@Injectable()
export class MerkleNodesRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** The stored nodes among `ids`, in the order asked, in one query; a node not stored is left out. */
  async nodes(chainId: string, ids: readonly NodeId[], db: Db = this.pool): Promise<MerkleNode[]> {
    if (ids.length === 0) return [];
    const rows = (await db.query(
      `SELECT n.level, n."index"::text AS index, n.hash
         FROM unnest($2::smallint[], $3::bigint[]) WITH ORDINALITY AS want(level, idx, ord)
         JOIN merkle_nodes n ON n.chain_id = $1 AND n.level = want.level AND n."index" = want.idx
        ORDER BY want.ord`,
      [chainId, ids.map((id) => id.level), ids.map((id) => id.index)],
    )) as NodeRow[];
    return rows.map((row) => ({ level: row.level, index: Number(row.index), hash: row.hash }));
  }

  /** What proofs read through (merkle.ts `NodeReader`): every node asked for, or an error naming the missing. */
  reader(chainId: string, db: Db = this.pool): NodeReader {
    return async (ids) => (await this.all(chainId, ids, db)).map((node) => node.hash);
  }

  /** The nodes on the right edge of the chain's tree of `size` leaves: what an append of more leaves extends. */
  frontier(chainId: string, size: number, db: Db = this.pool): Promise<MerkleNode[]> {
    return this.all(chainId, frontierIds(size), db);
  }

  /** Stores new nodes (merkle.ts `extendTree`) with one statement; a node already stored is a conflict. */
  async insertNodes(chainId: string, nodes: readonly MerkleNode[], db: Db = this.pool): Promise<void> {
    if (nodes.length === 0) return;
    await db.query(
      `INSERT INTO merkle_nodes (chain_id, level, "index", hash)
       SELECT $1, level, idx, decode(hash, 'hex')
         FROM unnest($2::smallint[], $3::bigint[], $4::text[]) AS node(level, idx, hash)`,
      [chainId, nodes.map((n) => n.level), nodes.map((n) => n.index), nodes.map((n) => n.hash.toString('hex'))],
    );
  }

  private async all(chainId: string, ids: readonly NodeId[], db: Db): Promise<MerkleNode[]> {
    const found = await this.nodes(chainId, ids, db);
    if (found.length !== ids.length) {
      const have = new Set(found.map((n) => `${n.level}/${n.index}`));
      const missing = ids.filter((id) => !have.has(`${id.level}/${id.index}`));
      throw new Error(
        `chain ${chainId} lacks Merkle node(s) ${missing.map((id) => `(${id.level}, ${id.index})`).join(', ')}`,
      );
    }
    return found;
  }
}
