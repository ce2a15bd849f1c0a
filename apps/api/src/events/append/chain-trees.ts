import { Injectable } from '@nestjs/common';
import { eventLeafHash, extendTree, MerkleNode } from '@app/hashing';
import { Db, EventRecord, MerkleNodesRepository } from '@app/database';

/**
 * Grows each chain's RFC 9162 Merkle tree (contract §10) by the events an append transaction
 * writes, under the same chain locks and in the same transaction: one query reads the frontier of
 * every touched chain, one statement inserts every new node (leaves and the perfect subtrees they
 * complete). A proof then reads O(log n) stored nodes instead of re-hashing the chain.
 */
@Injectable()
export class ChainTrees {
  constructor(private readonly nodes: MerkleNodesRepository) {}

  /** `events` are new, in position order within each chain, the first of each chain at its head + 1. */
  async grow(events: readonly EventRecord[], tx: Db): Promise<void> {
    if (events.length === 0) return;
    const leaves = new Map<string, { size: number; hashes: Buffer[] }>();
    for (const event of events) {
      let chain = leaves.get(event.chainId);
      if (!chain) leaves.set(event.chainId, (chain = { size: event.position - 1, hashes: [] }));
      chain.hashes.push(eventLeafHash(event.hash));
    }
    const frontiers = await this.nodes.frontiers(new Map([...leaves].map(([id, chain]) => [id, chain.size])), tx);
    const added: (MerkleNode & { chainId: string })[] = [];
    for (const [chainId, { size, hashes }] of leaves)
      for (const node of extendTree(size, frontiers.get(chainId)!, hashes).nodes) added.push({ chainId, ...node });
    await this.nodes.insertMany(added, tx);
  }
}
