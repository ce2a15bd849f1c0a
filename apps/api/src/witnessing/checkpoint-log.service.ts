import { Injectable } from '@nestjs/common';
import { AppConfig } from '@app/common';
import { CheckpointLogRepository, LogCheckpointRow, TransactionRunner } from '@app/database';
import {
  CHECKPOINT_ORIGIN_PREFIX,
  emptyRoot,
  extendTree,
  formatCheckpoint,
  frontierIds,
  MerkleNode,
  NoteFormatError,
  parseCheckpoint,
  resolvePlan,
  rootFromFrontier,
  rootPlan,
  toChainCheckpoint,
} from '@app/hashing';
import { CheckpointSigner } from '../checkpoints/checkpoint-signer';

/**
 * Signs checkpoints of the checkpoint log (docs/contract.md §18): the leaves stored since the latest
 * log checkpoint are added to the stored tree (checkpoint_log_nodes: every perfect subtree, so an
 * append reads only the frontier and a proof O(log n) nodes) and the new root is signed with the
 * checkpoint key under CHECKPOINT_LOG_ORIGIN, all in one transaction holding the signer's advisory
 * lock: one instance signs at a time, the others skip that round.
 */
@Injectable()
export class CheckpointLogService {
  constructor(
    private readonly config: AppConfig,
    private readonly transactions: TransactionRunner,
    private readonly log: CheckpointLogRepository,
    private readonly signer: CheckpointSigner,
  ) {
    // Signed with the same key as chain checkpoints: a log checkpoint must never read as one of those.
    if (isChainCheckpointOrigin(config.checkpointLogOrigin))
      throw new Error(
        `Invalid configuration:\n- CHECKPOINT_LOG_ORIGIN must not be a chain checkpoint's origin (${CHECKPOINT_ORIGIN_PREFIX}<chain id>)`,
      );
  }

  /** The new log checkpoint when the log grew (null: it did not, or another instance holds the lock). */
  async signIfGrown(): Promise<LogCheckpointRow | null> {
    return this.transactions.run(async (tx) => {
      if (!(await this.log.tryLockSigner(tx))) return null;
      const latest = await this.log.latestCheckpoint(undefined, tx);
      const signedSize = latest?.size ?? 0;
      const size = await this.log.size(tx);
      if (size <= signedSize) return null;
      const reader = this.log.reader(tx);
      const ids = frontierIds(signedSize);
      const hashes = ids.length === 0 ? [] : await reader(ids);
      const frontier: MerkleNode[] = ids.map((id, i) => ({ ...id, hash: hashes[i]! }));
      const grown = extendTree(signedSize, frontier, await this.log.leafHashes(signedSize, size, tx));
      await this.log.insertNodes(grown.nodes, tx);
      const root = rootFromFrontier(grown.frontier);
      const note = this.signer.signNote(
        formatCheckpoint({ origin: this.config.checkpointLogOrigin, size, hash: root }),
      );
      const signed = { size, root, note };
      await this.log.insertCheckpoint(signed, tx);
      return signed;
    });
  }

  /** The stored tree's root at `size` ≥ 1. */
  async rootAt(size: number): Promise<Buffer> {
    const [root] = await resolvePlan(rootPlan(size), this.log.reader());
    return root!;
  }
}

function isChainCheckpointOrigin(origin: string): boolean {
  try {
    toChainCheckpoint(parseCheckpoint(formatCheckpoint({ origin, size: 0, hash: emptyRoot() })));
    return true;
  } catch (error) {
    if (error instanceof NoteFormatError) return false;
    throw error;
  }
}
