import { EventHashPayload, recomputeStoredHash, StoredSecrets } from '@app/hashing';
import type { AuditedEvent, StoredCheckpoint } from './audited-event';
import { unrecordedErasures } from './erasure-record';
import { follows } from './event-checks';
import { StoredLevelRow, TreeNode, WindowTree, WindowTreeBuilder } from './window-tree';

/**
 * One window of whole-chain verification: the chain's events with after < position <= upTo and
 * the checkpoints signed in that range, read and hashed. This file knows nothing of Nest or of
 * where the rows come from, so the same code serves the service's own connection pool and the
 * worker threads (apps/api/src/verification/chain-window.worker.ts) that read windows on their
 * own connections.
 */
export interface WindowRequest {
  chainId: string;
  accountId: string;
  after: number;
  upTo: number;
  /** The walk's first window: it also takes the checkpoints of size `after` (0, or the number pruned). */
  first?: boolean;
}

/**
 * Where a window's rows come from: each method hands every row to `onRow` as it arrives and
 * resolves when the last one has been handed over. The SQL and which read runs which query live in
 * libs/database (`verificationWindowReads`), which the service's pool and the worker threads both
 * run. Rows that are hashed and dropped at once die young: the garbage collector then costs
 * a fraction of what a window held in full costs.
 */
export interface WindowRows {
  /** The window's checkpoints in size order (the first window, after = 0, also those of size 0). */
  checkpoints(window: WindowRequest, onRow: (row: StoredCheckpointRow) => void): Promise<void>;
  /** The window's events in position order, at most upTo − after + 1 of them. */
  events(window: WindowRequest, onRow: (row: StoredEvent) => void): Promise<void>;
  /** The stored Merkle nodes whose last leaf is in the window, one row per level (`verificationWindowNodesQuery`). */
  nodes(window: WindowRequest, onRow: (row: StoredLevelRow) => void): Promise<void>;
}

/** A checkpoint row as read: the size as text (bigint). */
export interface StoredCheckpointRow {
  size: string;
  hash: string;
  note: string;
}

/** A stored event of a window: its hash payload, its version-2 secrets (null on version 1), its stored hash. */
export interface StoredEvent extends EventHashPayload, StoredSecrets {
  /** False when the row's account is not the chain's. */
  ownAccount: boolean;
  hash: string;
  /** The erased fields the database recorded for it (null: it keeps no erasure); absent: not read. */
  recordedErasures?: string[] | null;
}

export type HashedEvent = AuditedEvent & { computedHash: string | null };

/** Consecutive events that all hash to their stored hashes, belong to the chain's account, link up and keep time order. */
export interface IntactRun {
  count: number;
  first: AuditedEvent;
  last: AuditedEvent;
}

/**
 * What a window holds, in position order: an intact run, travelling as its two ends (nothing
 * between them can be wrong), then, from the first event that is not (altered, foreign, out of
 * place), every event with its recomputed hash, so that the audit can say what is wrong. An
 * honest window is one run and no events.
 */
export interface WindowEvents {
  run: IntactRun | null;
  events: HashedEvent[];
}

/** A checkpoint of the window with the stored event at its size (null when there is none). */
export interface WindowCheckpoint {
  checkpoint: StoredCheckpoint;
  event: { id: string; hash: string } | null;
  /** The maximal perfect subtrees of leaves [after, size), from the events' stored hashes; null when unknown (a gap). */
  prefix: TreeNode[] | null;
}

export interface WindowReport {
  events: WindowEvents;
  checkpoints: WindowCheckpoint[];
  /** The window's part of the chain's Merkle tree, and how the stored tree agrees with it. */
  tree: WindowTree;
}

export async function inspectWindow(rows: WindowRows, window: WindowRequest): Promise<WindowReport> {
  const checkpoints: WindowCheckpoint[] = [];
  const atSize = new Map<number, WindowCheckpoint>();
  await rows.checkpoints(window, ({ size, hash, note }) => {
    const entry: WindowCheckpoint = { checkpoint: { size: Number(size), hash, note }, event: null, prefix: null };
    checkpoints.push(entry);
    atSize.set(entry.checkpoint.size, entry);
  });
  // A checkpoint of size `after` (the first window's: 0, or the number pruned) is the tree before any leaf of the window.
  const atStart = atSize.get(window.after);
  if (atStart) atStart.prefix = [];
  const tree = new WindowTreeBuilder(window.after, window.upTo);
  await rows.nodes(window, (row) => tree.addStored(row));
  const hasher = new WindowHasher();
  await rows.events(window, (event) => {
    hasher.add(event);
    tree.addLeaf(event.position, event.hash);
    const entry = atSize.get(event.position);
    if (entry && entry.event === null) entry.event = { id: event.id, hash: event.hash };
    if (entry && entry.prefix === null) entry.prefix = tree.prefix();
  });
  return { events: hasher.result(), checkpoints, tree: tree.result() };
}

/** Hashes a window's events one by one, in position order, keeping only what the audit needs. */
class WindowHasher {
  private run: IntactRun | null = null;
  private readonly events: HashedEvent[] = [];

  add(event: StoredEvent): void {
    const computedHash = recomputeStoredHash(event);
    const unrecorded = unrecordedErasures(event.erasure, event.recordedErasures);
    const last = this.run?.last;
    const fits =
      this.events.length === 0 &&
      event.ownAccount &&
      computedHash === event.hash &&
      unrecorded.length === 0 &&
      (last === undefined || (event.position === last.position + 1 && follows(event, last)));
    if (!fits)
      this.events.push({
        ...audited(event),
        computedHash,
        ...(unrecorded.length > 0 ? { unrecordedErasures: unrecorded } : {}),
      });
    else if (this.run) {
      this.run.count++;
      this.run.last = audited(event);
    } else {
      const first = audited(event);
      this.run = { count: 1, first, last: first };
    }
  }

  result(): WindowEvents {
    return { run: this.run, events: this.events };
  }
}

function audited({ id, ownAccount, position, hash, previousHash, timestamp }: StoredEvent): AuditedEvent {
  return { id, ownAccount, position, hash, previousHash, timestamp };
}
