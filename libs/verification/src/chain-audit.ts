import {
  GENESIS_HASH,
  leafHashOfHex,
  MerkleNode,
  NoteVerifier,
  NodeId,
  pushNode,
  verifyChainCheckpoint,
} from '@app/hashing';
import type { AuditedEvent, StoredCheckpoint } from './audited-event';
import type { WindowReport } from './chain-window';
import { describeNode, TreeFrontier, TreeNode } from './window-tree';
import {
  FOREIGN_EVENT_FAILURE,
  gapFailure,
  hashFailure,
  linkFailure,
  repeatedPositionFailure,
  timestampFailure,
} from './event-checks';
import { erasureRecordFailure } from './erasure-record';
import { pruneRecordFailures, RecordedPrune } from './prune-record';

/** One error of whole-chain verification. */
export interface ChainVerificationError {
  /** The position the error is about (for a gap: the first missing position). */
  position: number;
  /** The event at that position, or null when it is missing. */
  eventId: string | null;
  message: string;
}

/** The answer of whole-chain verification (GET /v1/chain/:chainId/verify). */
export interface ChainVerificationResult {
  valid: boolean;
  chainId: string;
  checkedEvents: number;
  lastPosition: number;
  lastHash: string;
  firstInvalidPosition: number | null;
  checkpointsChecked: number;
  errors: ChainVerificationError[];
  errorCount: number;
  errorsTruncated: boolean;
  verifiedAt: string;
}

/** More would only make the answer large; `errorsTruncated` and firstInvalidPosition still tell. */
export const MAX_REPORTED_ERRORS = 100;

/**
 * What a chain keeps of a pruned prefix (docs/contract.md §14): the last pruned event's position, hash and
 * timestamp, and the Merkle nodes over positions 1…position (`frontierIds(position)`; null when
 * some are missing).
 */
export interface PrunedPrefix {
  position: number;
  hash: string;
  timestamp: string;
  nodes: TreeNode[] | null;
  /** The kept nodes over positions 1…position − 1 (`frontierIds(position − 1)`; null when some are missing). */
  spine: TreeNode[] | null;
}

/** Whether the kept nodes of [0, p − 1) and the leaf of the kept hash give the kept nodes of [0, p). */
function spineGives({ position, hash, nodes, spine }: PrunedPrefix): boolean {
  if (!nodes || !spine) return false;
  const stack: MerkleNode[] = spine.map((n) => ({ ...n, hash: Buffer.from(n.hash, 'hex') }));
  pushNode(stack, { level: 0, index: position - 1, hash: leafHashOfHex(hash) });
  return (
    stack.length === nodes.length &&
    stack.every(
      (n, i) => n.level === nodes[i]!.level && n.index === nodes[i]!.index && n.hash.toString('hex') === nodes[i]!.hash,
    )
  );
}

/**
 * Whole-chain verification as a fold: feed it the chain's windows (or events) in position order
 * and the stored checkpoints with the event at each checkpoint's size, then the head facts; it
 * keeps O(log n) state (the Merkle tree's frontier) besides the (capped) error list. Windows also
 * carry their part of the Merkle tree: the audit recomputes the root at each checkpoint's size
 * and holds the stored tree against the one the events give (docs/contract.md §10).
 */
export class ChainAudit {
  private expectedPosition = 1;
  /** The event walked last (its hash, timestamp, …), or what a prune kept of it (id null); null before the first. */
  private last: { position: number; hash: string; id: string | null; timestamp: string } | null = null;
  /** The number of events pruned (0: none). */
  private readonly prunedThrough: number;
  private checkedEvents = 0;
  private checkpointsChecked = 0;
  private errorCount = 0;
  private firstInvalidPosition: number | null = null;
  private readonly errors: ChainVerificationError[] = [];
  /** The Merkle tree over the windows folded so far; null once a gap or repeat left it unknown. */
  private tree: TreeFrontier | null = new TreeFrontier();
  /** Stored Merkle nodes found to disagree with the events, reported as one error by `result`. */
  private treeMismatches = 0;
  private firstTreeMismatch: NodeId | null = null;

  constructor(
    private readonly chain: { id: string },
    /** The service's checkpoint key, then its retired ones. */
    private readonly verifiers: readonly NoteVerifier[],
    /** A pruned chain's walk starts after what the prune kept (docs/contract.md §14). */
    pruned: PrunedPrefix | null = null,
  ) {
    this.prunedThrough = pruned?.position ?? 0;
    if (!pruned || pruned.position === 0) return;
    this.expectedPosition = pruned.position + 1;
    this.last = { position: pruned.position, hash: pruned.hash, id: null, timestamp: pruned.timestamp };
    if (pruned.nodes === null || pruned.spine === null) {
      this.tree = null;
      this.fail(
        pruned.position,
        null,
        `the Merkle nodes kept over the pruned positions 1–${pruned.position} are missing: proofs and checkpoints of the retained events cannot be checked`,
      );
      return;
    }
    this.tree = TreeFrontier.kept(pruned.position, pruned.nodes);
    if (!spineGives(pruned))
      this.fail(
        pruned.position,
        null,
        `the kept hash of the last pruned event (position ${pruned.position}) is not the last leaf of the kept Merkle nodes: the kept hash or nodes were rewritten`,
      );
  }

  /** A window's events, then its checkpoints, then its part of the Merkle tree. */
  addWindow({ events: { run, events }, checkpoints, tree }: WindowReport): void {
    if (run) {
      // Its first event is checked against what came before; the others were checked, against
      // their predecessors, where the window was hashed: as if each had been added.
      this.addEvent(run.first, run.first.hash);
      this.checkedEvents += run.count - 1;
      this.expectedPosition = run.last.position + 1;
      this.last = run.last;
    }
    for (const event of events) this.addEvent(event, event.computedHash);
    const frontier = this.tree;
    for (const { checkpoint, event, prefix } of checkpoints)
      this.addCheckpoint(checkpoint, event, frontier && prefix ? frontier.rootWith(prefix) : null);
    if (tree.firstMismatch) this.treeDisagrees(tree.mismatches, tree.firstMismatch);
    if (
      !frontier ||
      !tree.complete ||
      (tree.nodes[0] && tree.nodes[0].index * 2 ** tree.nodes[0].level !== frontier.size)
    ) {
      this.tree = null;
      return;
    }
    const wrong = frontier.add(tree.nodes, tree.crossing);
    if (wrong.length > 0) this.treeDisagrees(wrong.length, wrong[0]!);
  }

  /** Stored Merkle nodes that the events' tree does not have, with those hashes. */
  private treeDisagrees(count: number, first: NodeId): void {
    this.treeMismatches += count;
    const at = (n: NodeId): number => n.index * 2 ** n.level;
    if (!this.firstTreeMismatch || at(first) < at(this.firstTreeMismatch)) this.firstTreeMismatch = first;
  }

  /** One error for the whole stored tree, however many nodes disagree. */
  private reportTree(): void {
    const first = this.firstTreeMismatch;
    if (!first) return;
    this.fail(
      first.index * 2 ** first.level + 1,
      null,
      `the stored Merkle tree disagrees with the events: ${this.treeMismatches} node(s) differ, are missing or are extra, the first ${describeNode(first)}: the tree or the events were rewritten`,
    );
    this.firstTreeMismatch = null;
  }

  /** `computedHash` is the hash recomputed from the event's stored payload. */
  addEvent(event: AuditedEvent, computedHash: string | null): void {
    this.checkedEvents++;
    const { position, id } = event;
    const gap = position > this.expectedPosition;
    if (gap) this.fail(this.expectedPosition, null, gapFailure(this.expectedPosition, position));
    else if (position < this.expectedPosition) this.fail(position, id, repeatedPositionFailure(position));
    if (!event.ownAccount) this.fail(position, id, FOREIGN_EVENT_FAILURE);
    const altered = hashFailure(event, computedHash);
    if (altered) this.fail(position, id, altered);
    if (event.unrecordedErasures?.length)
      this.fail(position, id, erasureRecordFailure(position, event.unrecordedErasures));
    if (!gap) {
      // The event walked before it stands for position − 1 (a gap was reported above instead).
      const broken = linkFailure(event, this.last);
      if (broken) this.fail(position, id, broken);
      const earlier = timestampFailure(event, this.last);
      if (earlier) this.fail(position, id, earlier);
    }
    this.expectedPosition = position + 1;
    this.last = { position, hash: event.hash, id, timestamp: event.timestamp };
  }

  /**
   * `event` is the stored event at position `checkpoint.size`, or null when there is none (or it was
   * the last one pruned); `root`
   * the Merkle root recomputed from the stored events' hashes 1…size, or null when they are not
   * all there.
   */
  addCheckpoint(checkpoint: StoredCheckpoint, event: { id: string; hash: string } | null, root: string | null): void {
    this.checkpointsChecked++;
    const { size } = checkpoint;
    const opened = verifyChainCheckpoint(checkpoint.note, this.verifiers);
    if (!opened.ok) {
      this.fail(
        size,
        event?.id ?? null,
        `the stored checkpoint of size ${size} is not signed by this service's checkpoint key nor a retired one (${opened.message}): it was forged or altered, or signed by an earlier key missing from RETIRED_VERIFIER_KEYS`,
      );
      return;
    }
    const signed = opened.checkpoint;
    if (signed.chainId !== this.chain.id || signed.size !== size || signed.hash !== checkpoint.hash) {
      this.fail(size, event?.id ?? null, `the stored checkpoint row of size ${size} does not match its signed note`);
      return;
    }
    if (size > 0 && event === null && size !== this.prunedThrough) {
      this.fail(size, null, `a checkpoint was signed at size ${size}, but the event at position ${size} is missing`);
    } else if (root === null) {
      this.fail(
        size,
        event?.id ?? null,
        `the Merkle root of the checkpoint signed at size ${size} cannot be recomputed: events before position ${size} are missing or repeated`,
      );
    } else if (root !== signed.hash) {
      this.fail(
        size,
        event?.id ?? null,
        `the checkpoint signed at size ${size} has Merkle root ${signed.hash}, but the events up to position ${size} give ${root}: the chain was rewritten after it was signed`,
      );
    }
  }

  /** The head read before the walk: `position` events, the last with `hash`. */
  checkHead(head: { position: number; hash: string }): void {
    const lastPosition = this.last?.position ?? 0;
    if (lastPosition < head.position) {
      this.fail(
        lastPosition + 1,
        null,
        `the chain head says ${head.position} events, but no event was found after position ${lastPosition}`,
      );
    } else if ((this.last?.hash ?? GENESIS_HASH) !== head.hash) {
      this.fail(
        head.position,
        this.last?.id ?? null,
        `the chain head hash ${head.hash} is not the hash of the event at position ${head.position}`,
      );
    }
  }

  /**
   * The prunes the database recorded (retention_log) against the positions missing from the
   * chain's start, and the stored checkpoints at the sizes they relied on (docs/contract.md §14).
   */
  checkPruneRecord(prunes: readonly RecordedPrune[], covering: readonly StoredCheckpoint[]): void {
    const chain = { id: this.chain.id, prunedThrough: this.prunedThrough };
    for (const failure of pruneRecordFailures(chain, prunes, covering, this.verifiers))
      this.fail(failure.position, null, failure.message);
  }

  /** Checkpoints signed for more events than the chain now has. */
  checkpointsAboveHead(count: number, smallestSize: number, headPosition: number): void {
    if (count === 0) return;
    this.checkpointsChecked += count;
    this.fail(
      smallestSize,
      null,
      `${count} checkpoint(s) were signed for more events than the chain now has (${headPosition}), the smallest at size ${smallestSize}: events were removed`,
    );
  }

  /**
   * Stored Merkle nodes of subtrees that end beyond the head: the service writes a node once it is
   * complete, so the events it covers were removed (with the head moved back), or the row was forged.
   */
  nodesBeyondHead(count: number, headPosition: number): void {
    if (count > 0)
      this.fail(
        headPosition + 1,
        null,
        `${count} Merkle tree node(s) are stored for positions beyond the chain head at position ${headPosition}: events were removed, or the nodes were not written by this service`,
      );
  }

  eventsBeyondHead(count: number, firstPosition: number, headPosition: number): void {
    if (count > 0)
      this.fail(firstPosition, null, `${count} event(s) lie beyond the chain head at position ${headPosition}`);
  }

  result(verifiedAt: Date): ChainVerificationResult {
    this.reportTree();
    return {
      valid: this.errorCount === 0,
      chainId: this.chain.id,
      checkedEvents: this.checkedEvents,
      lastPosition: this.last?.position ?? 0,
      lastHash: this.last?.hash ?? GENESIS_HASH,
      firstInvalidPosition: this.firstInvalidPosition,
      checkpointsChecked: this.checkpointsChecked,
      errors: [...this.errors],
      errorCount: this.errorCount,
      errorsTruncated: this.errorCount > this.errors.length,
      verifiedAt: verifiedAt.toISOString(),
    };
  }

  private fail(position: number, eventId: string | null, message: string): void {
    this.errorCount++;
    if (this.firstInvalidPosition === null || position < this.firstInvalidPosition)
      this.firstInvalidPosition = position;
    if (this.errors.length < MAX_REPORTED_ERRORS) this.errors.push({ position, eventId, message });
  }
}
