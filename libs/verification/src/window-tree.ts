import {
  leafHashOfHex,
  LOWEST_STORED_LEVEL,
  MERKLE_HASH_BYTES,
  MerkleNode,
  NodeId,
  pushNode,
  rootFromFrontier,
} from '@app/hashing';

/*
 * The Merkle part of whole-chain verification (docs/contract.md §10): a window of events rebuilds the
 * chain's tree over positions after+1…upTo from the events' stored hashes, holds every stored
 * node that ends inside the window against it, and hands the audit only O(log n) hashes: the
 * maximal perfect subtrees of its leaves (and of each checkpoint's prefix), plus the stored nodes
 * that start before the window, which only the audit (holding the tree's left part) can recompute.
 */

/** A perfect subtree with its hash as 64 hex characters: reports cross worker threads, where a Buffer would not stay one. */
export interface TreeNode extends NodeId {
  hash: string;
}

/** One level of a window's stored Merkle nodes as read (`verificationWindowNodesQuery`). */
export interface StoredLevelRow {
  level: number;
  /** Each node as its index (8 bytes, big-endian) followed by its hash (32 bytes), in index order. */
  nodes: Uint8Array;
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
const toTreeNode = (n: MerkleNode): TreeNode => ({ level: n.level, index: n.index, hash: n.hash.toString('hex') });

const ENTRY_BYTES = 8 + MERKLE_HASH_BYTES;

/** A level's stored nodes as read, walked in index order: nothing is copied out of the row. */
class StoredLevel {
  private at = 0;
  /** The index of the node at the cursor; Infinity past the last. */
  index: number;

  constructor(
    readonly level: number,
    private readonly nodes: Buffer,
  ) {
    this.index = this.readIndex();
  }

  /** Whether the node at the cursor has this hash. */
  holds(hash: Buffer): boolean {
    return hash.compare(this.nodes, this.at + 8, this.at + ENTRY_BYTES) === 0;
  }

  hex(): string {
    return this.nodes.toString('hex', this.at + 8, this.at + ENTRY_BYTES);
  }

  next(): void {
    this.at += ENTRY_BYTES;
    this.index = this.readIndex();
  }

  private readIndex(): number {
    if (this.at >= this.nodes.length) return Infinity;
    return this.nodes.readUInt32BE(this.at) * 2 ** 32 + this.nodes.readUInt32BE(this.at + 4);
  }
}

/** Builds a window's tree leaf by leaf (O(log n) stack) while holding the stored nodes against it, level by level in index order. */
export class WindowTreeBuilder {
  private readonly stack: MerkleNode[] = [];
  /** The stored nodes inside the window, by level. */
  private readonly levels: StoredLevel[] = [];
  private readonly crossing: TreeNode[] = [];
  private count = 0;
  private complete = true;
  private mismatches = 0;
  private firstMismatch: NodeId | null = null;
  /** Only stored levels are held against the store: those below are the events' own (LOWEST_STORED_LEVEL). */
  private readonly checkMade = (node: MerkleNode): void => {
    if (node.level >= LOWEST_STORED_LEVEL) this.check(node);
  };

  constructor(
    private readonly after: number,
    private readonly upTo: number,
  ) {}

  /** A level of the stored nodes whose last leaf is in the window (`verificationWindowNodesQuery`). */
  addStored({ level, nodes }: StoredLevelRow): void {
    const stored = new StoredLevel(level, Buffer.from(nodes.buffer, nodes.byteOffset, nodes.byteLength));
    // Only a level's first node can start before the window: the audit, which holds the tree's left part, checks it.
    for (; stored.index * 2 ** level < this.after; stored.next())
      this.crossing.push({ level, index: stored.index, hash: stored.hex() });
    this.levels[level] = stored;
  }

  /** The next event of the window: its position and stored hash (the leaf data). */
  addLeaf(position: number, eventHash: string): void {
    if (!this.complete) return;
    if (position !== this.after + this.count + 1) {
      this.complete = false;
      return;
    }
    this.count++;
    // A leaf is not stored (it is derived from its event): only the stored parents made are held against the store.
    const leaf: MerkleNode = { level: 0, index: position - 1, hash: leafHashOfHex(eventHash) };
    pushNode(this.stack, leaf, this.checkMade);
  }

  /** The maximal perfect subtrees of the leaves so far (of [after, position of the last leaf)), or null when unknown. */
  prefix(): TreeNode[] | null {
    return this.complete ? this.stack.map(toTreeNode) : null;
  }

  result(): WindowTree {
    if (this.count !== this.upTo - this.after) this.complete = false;
    // Stored nodes left over: the events' tree of a whole window has every node inside it, so only a
    // second copy of one (should the primary key be gone) is left.
    if (this.complete) for (const stored of this.levels) if (stored) this.passBefore(stored, Infinity);
    return {
      complete: this.complete,
      nodes: this.complete ? this.stack.map(toTreeNode) : [],
      crossing: this.crossing,
      mismatches: this.mismatches,
      firstMismatch: this.firstMismatch,
    };
  }

  /** The events' tree makes a level's nodes in index order, so each is met by the cursor of its level. */
  private check(node: MerkleNode): void {
    const stored = this.levels[node.level];
    if (stored) this.passBefore(stored, node.index);
    if (stored?.index === node.index) {
      if (!stored.holds(node.hash)) this.mismatch(node);
      stored.next();
    } else {
      this.mismatch(node);
    }
  }

  /** Stored nodes of the level below `index` that the events' tree went past (a second copy of one) are extra. */
  private passBefore(stored: StoredLevel, index: number): void {
    for (; stored.index < index; stored.next()) this.mismatch({ level: stored.level, index: stored.index });
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

  /**
   * The frontier of a chain pruned up to `size` (docs/contract.md §14): the perfect subtrees of [0, size)
   * the prune kept (`frontierIds(size)`, in that order). They are checked where they are used: by
   * the stored nodes that span them and the retained events, and by every checkpoint of a size ≥ `size`.
   */
  static kept(size: number, nodes: readonly TreeNode[]): TreeFrontier {
    const frontier = new TreeFrontier();
    frontier.add(nodes, []);
    if (frontier.size !== size) throw new RangeError(`the kept nodes cover ${frontier.size} leaves, not ${size}`);
    return frontier;
  }

  /** The root of the tree of `size` + the prefix's leaves. */
  rootWith(prefix: readonly TreeNode[]): string {
    const stack = [...this.stack];
    for (const node of prefix) pushNode(stack, { ...node, hash: Buffer.from(node.hash, 'hex') });
    return rootFromFrontier(stack).toString('hex');
  }

  /** Appends a window's subtrees; returns the nodes it completed that `stored` lacks or holds with another hash (and the stored ones left over). */
  add(nodes: readonly TreeNode[], stored: readonly TreeNode[]): NodeId[] {
    const left = [...stored]; // O(log n): one a level at most, but for copies
    const wrong: NodeId[] = [];
    for (const node of nodes) {
      this.size += 2 ** node.level;
      pushNode(this.stack, { ...node, hash: Buffer.from(node.hash, 'hex') }, (made) => {
        if (made.level < LOWEST_STORED_LEVEL) return;
        const at = left.findIndex((n) => n.level === made.level && n.index === made.index);
        if (at < 0 || !made.hash.equals(Buffer.from(left[at]!.hash, 'hex')))
          wrong.push({ level: made.level, index: made.index });
        if (at >= 0) left.splice(at, 1);
      });
    }
    for (const { level, index } of left) wrong.push({ level, index });
    return wrong;
  }
}

/** Describes a node for a report: the positions it covers. */
export function describeNode(node: NodeId): string {
  const first = start(node) + 1;
  const last = end(node);
  return `node (${node.level}, ${node.index}), over position${first === last ? ` ${first}` : `s ${first}–${last}`}`;
}
