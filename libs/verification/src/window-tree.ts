import { leafHashOfHex, MerkleNode, NodeId, pushNode, rootFromFrontier } from '@app/hashing';

/*
 * The Merkle part of whole-chain verification (contract §10): a window of events rebuilds the
 * chain's tree over positions after+1…upTo from the events' stored hashes, holds every stored
 * node that ends inside the window against it, and hands the audit only O(log n) hashes: the
 * maximal perfect subtrees of its leaves (and of each checkpoint's prefix), plus the stored nodes
 * that start before the window, which only the audit (holding the tree's left part) can recompute.
 */

/** A perfect subtree with its hash as 64 hex characters: reports cross worker threads, where a Buffer would not stay one. */
export interface TreeNode extends NodeId {
  hash: string;
}

/** A stored merkle_nodes row as read: the index as text (bigint), the hash as bytes. */
export interface StoredNodeRow {
  level: number;
  index: string;
  hash: Uint8Array;
}

export interface WindowTree {
  /** False when the window's events were not exactly positions after+1…upTo (a gap or a repeat, reported as such): its tree is then unknown. */
  complete: boolean;
  /** The maximal perfect subtrees of the window's leaves, left to right. */
  nodes: TreeNode[];
  /** Stored nodes that end in the window and start before it. */
  crossing: TreeNode[];
  /** Stored nodes inside the window that differ from the events' tree, are missing, or are extra. */
  mismatches: number;
  firstMismatch: NodeId | null;
}

const start = (n: NodeId): number => n.index * 2 ** n.level;
const end = (n: NodeId): number => (n.index + 1) * 2 ** n.level;
/** The order nodes are completed in, and read in: by the last leaf they cover, children before parents. */
const before = (a: NodeId, b: NodeId): boolean => end(a) < end(b) || (end(a) === end(b) && a.level < b.level);
const toTreeNode = (n: MerkleNode): TreeNode => ({ level: n.level, index: n.index, hash: n.hash.toString('hex') });

/** Builds a window's tree leaf by leaf (O(log n) stack) while holding the stored nodes against it in one pass. */
export class WindowTreeBuilder {
  private readonly stack: MerkleNode[] = [];
  private readonly inside: { level: number; index: number; hash: Uint8Array }[] = [];
  private readonly crossing: TreeNode[] = [];
  private next = 0;
  private count = 0;
  private complete = true;
  private mismatches = 0;
  private firstMismatch: NodeId | null = null;
  private readonly checkMade = (node: MerkleNode): void => this.check(node);

  constructor(
    private readonly after: number,
    private readonly upTo: number,
  ) {}

  /** Stored nodes whose last leaf is in the window, in completion order (`verificationWindowNodesQuery`). */
  addStored(row: StoredNodeRow): void {
    const node = { level: row.level, index: Number(row.index), hash: row.hash };
    if (start(node) < this.after) this.crossing.push({ ...node, hash: Buffer.from(row.hash).toString('hex') });
    else this.inside.push(node);
  }

  /** The next event of the window: its position and stored hash (the leaf data). */
  addLeaf(position: number, eventHash: string): void {
    if (!this.complete) return;
    if (position !== this.after + this.count + 1) {
      this.complete = false;
      return;
    }
    this.count++;
    const leaf: MerkleNode = { level: 0, index: position - 1, hash: leafHashOfHex(eventHash) };
    this.check(leaf);
    pushNode(this.stack, leaf, this.checkMade);
  }

  /** The maximal perfect subtrees of the leaves so far (of [after, position of the last leaf)), or null when unknown. */
  prefix(): TreeNode[] | null {
    return this.complete ? this.stack.map(toTreeNode) : null;
  }

  result(): WindowTree {
    if (this.count !== this.upTo - this.after) this.complete = false;
    if (this.complete) for (; this.next < this.inside.length; this.next++) this.mismatch(this.inside[this.next]!);
    return {
      complete: this.complete,
      nodes: this.complete ? this.stack.map(toTreeNode) : [],
      crossing: this.crossing,
      mismatches: this.mismatches,
      firstMismatch: this.firstMismatch,
    };
  }

  private check(node: MerkleNode): void {
    while (this.next < this.inside.length && before(this.inside[this.next]!, node))
      this.mismatch(this.inside[this.next++]!);
    const stored = this.inside[this.next];
    if (stored && stored.level === node.level && stored.index === node.index) {
      this.next++;
      if (Buffer.compare(stored.hash, node.hash) !== 0) this.mismatch(node);
    } else {
      this.mismatch(node);
    }
  }

  private mismatch(node: NodeId): void {
    this.mismatches++;
    this.firstMismatch ??= { level: node.level, index: node.index };
  }
}

/**
 * The audit's side: the tree's frontier up to the windows folded so far (O(log n) nodes). Adding
 * a window's subtrees completes the nodes that span windows; each is held against the stored one.
 */
export class TreeFrontier {
  private readonly stack: MerkleNode[] = [];
  size = 0;

  /** The root of the tree of `size` + the prefix's leaves. */
  rootWith(prefix: readonly TreeNode[]): string {
    const stack = [...this.stack];
    for (const node of prefix) pushNode(stack, { ...node, hash: Buffer.from(node.hash, 'hex') });
    return rootFromFrontier(stack).toString('hex');
  }

  /** Appends a window's subtrees; returns the nodes it completed that `stored` lacks or holds with another hash (and the stored ones left over). */
  add(nodes: readonly TreeNode[], stored: readonly TreeNode[]): NodeId[] {
    const storedByKey = new Map(stored.map((n) => [`${n.level}/${n.index}`, n.hash]));
    const wrong: NodeId[] = [];
    for (const node of nodes) {
      this.size += 2 ** node.level;
      pushNode(this.stack, { ...node, hash: Buffer.from(node.hash, 'hex') }, (made) => {
        const key = `${made.level}/${made.index}`;
        if (storedByKey.get(key) !== made.hash.toString('hex')) wrong.push({ level: made.level, index: made.index });
        storedByKey.delete(key);
      });
    }
    for (const key of storedByKey.keys()) {
      const [level, index] = key.split('/').map(Number);
      wrong.push({ level: level!, index: index! });
    }
    return wrong;
  }
}

/** Describes a node for a report: the positions it covers. */
export function describeNode(node: NodeId): string {
  const first = start(node) + 1;
  const last = end(node);
  return `node (${node.level}, ${node.index}), over position${first === last ? ` ${first}` : `s ${first}–${last}`}`;
}
