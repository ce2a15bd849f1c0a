import { Injectable } from '@nestjs/common';
import { eventLeafHash, extendTree, MerkleNode } from '@app/hashing';
import { Db, EventRecord, MerkleNodesRepository, SqlQuery } from '@app/database';

/** Frontiers remembered, by chain; beyond this many chains the memory starts over. */
const MAX_REMEMBERED = 10_000;

interface Remembered {
  size: number;
  /** The hash of the event at `size`: it commits to every event before it, hence to the whole tree. */
  headHash: string;
  frontier: MerkleNode[];
}

/**
 * Grows each chain's RFC 9162 Merkle tree (docs/contract.md §10) by the events an append transaction
 * writes, under the same chain locks and in the same transaction: one query reads the frontier of
 * every touched chain, and the new nodes (the perfect subtrees the leaves complete; leaves are not
 * stored) are inserted by a statement the ledger runs with its heads' move, so the tree adds no
 * round trip of its own. A proof then reads O(log n) stored nodes instead of re-hashing the chain.
 *
 * The frontier a transaction leaves is remembered with the head hash it belongs to. A head hash
 * commits to every event up to it, so when the next transaction finds the chain at that size and
 * hash (its first event's previousHash), the remembered frontier is the stored one and the query
 * is skipped: a hot chain's appends spend no statement of their own on the tree, under its lock. A
 * transaction that rolls back leaves a frontier no committed head will match, or the same one.
 */
@Injectable()
export class ChainTrees {
  private readonly remembered = new Map<string, Remembered>();

  constructor(private readonly nodes: MerkleNodesRepository) {}

  /**
   * `events` are new, in position order within each chain, the first of each chain at its head + 1.
   * Returns the statement that stores the grown trees (null: nothing to store), for the caller to
   * run in `tx` (ChainHeadsRepository `moveHeads`).
   */
  async grow(events: readonly EventRecord[], tx: Db): Promise<SqlQuery | null> {
    if (events.length === 0) return null;
    const chains = new Map<string, { size: number; headHash: string; last: EventRecord; leaves: Buffer[] }>();
    for (const event of events) {
      let chain = chains.get(event.chainId);
      if (!chain)
        chains.set(
          event.chainId,
          (chain = { size: event.position - 1, headHash: event.previousHash, last: event, leaves: [] }),
        );
      chain.leaves.push(eventLeafHash(event.hash));
      chain.last = event;
    }
    const known = new Map<string, MerkleNode[]>();
    const unknown = new Map<string, number>();
    for (const [chainId, { size, headHash }] of chains) {
      const memory = this.remembered.get(chainId);
      if (memory && memory.size === size && memory.headHash === headHash) known.set(chainId, memory.frontier);
      else unknown.set(chainId, size);
    }
    const read = unknown.size > 0 ? await this.nodes.frontiers(unknown, tx) : new Map<string, MerkleNode[]>();
    const grownTrees: { chainId: string; nodes: MerkleNode[] }[] = [];
    if (this.remembered.size > MAX_REMEMBERED) this.remembered.clear();
    for (const [chainId, { size, leaves, last }] of chains) {
      const grown = extendTree(size, known.get(chainId) ?? read.get(chainId)!, leaves);
      grownTrees.push({ chainId, nodes: grown.nodes });
      this.remembered.set(chainId, { size: last.position, headHash: last.hash, frontier: grown.frontier });
    }
    return this.nodes.insertStatement(grownTrees);
  }
}
