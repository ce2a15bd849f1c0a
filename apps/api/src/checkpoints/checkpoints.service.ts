import { Injectable } from '@nestjs/common';
import { AppError, CHAIN_ID } from '@app/common';
import {
  consistencyPlan,
  emptyRoot,
  eventLeafHash,
  leafHash,
  LOWEST_STORED_LEVEL,
  nodeHash,
  nodePlan,
  resolvePlans,
  rootPlan,
  verifyChainCheckpoint,
  verifyConsistency,
} from '@app/hashing';
import {
  ChainHeadsRepository,
  CheckpointLogRepository,
  CheckpointRow,
  CheckpointsRepository,
  Db,
  MerkleNodesRepository,
  TransactionRunner,
} from '@app/database';
import { CheckpointSigner } from './checkpoint-signer';

/** What a checkpoint signs: the chain's size and the Merkle root (hex) of its first `size` events. */
interface Head {
  size: number;
  hash: string;
}

/** The stored tree at the head's size: its root, and the consistency proof from the latest signed size when smaller. */
interface Tree {
  root: string;
  proof: Buffer[];
}

/**
 * Signs checkpoints of the chain's Merkle root (docs/contract.md §10). The invariant (tlog-checkpoint:
 * never sign a checkpoint inconsistent with one signed before) is checked against the latest
 * stored checkpoint with an RFC 9162 consistency proof read from the stored tree, inside a
 * transaction that holds the chain row FOR SHARE: appends (which take it FOR UPDATE) wait, other
 * checkpoint requests do not, and all of them see the same head and tree. Every Merkle node a
 * request needs (root, proof, the nodes at the head) is read in one query.
 */
@Injectable()
export class CheckpointsService {
  constructor(
    private readonly transactions: TransactionRunner,
    private readonly heads: ChainHeadsRepository,
    private readonly checkpoints: CheckpointsRepository,
    private readonly nodes: MerkleNodesRepository,
    private readonly signer: CheckpointSigner,
    private readonly log: CheckpointLogRepository,
  ) {}

  verifierKey(): string {
    return `${this.signer.verifierKey}\n`;
  }

  /** The latest checkpoint of the chain as a signed note, signing a new one if the chain grew. */
  async latest(accountId: string, chainId: string): Promise<string> {
    if (!CHAIN_ID.test(chainId)) throw AppError.notFound(`Chain ${chainId}`);
    return this.transactions.run(async (tx) => {
      const locked = await this.heads.lockHeadForShare(accountId, chainId, tx);
      if (!locked) throw AppError.notFound(`Chain ${chainId}`);
      const latest = await this.latestSigned(chainId, tx);
      const tree = await this.readTree(chainId, locked, latest === null ? null : latest.size, tx);
      const head: Head = { size: locked.size, hash: tree.root };
      if (latest && latest.size === head.size && latest.hash === head.hash) return this.asCurrent(chainId, latest);
      if (latest) this.assertExtends(chainId, head, latest, tree.proof);
      const note = this.signer.sign({ chainId, size: head.size, hash: head.hash });
      const stored = { chainId, size: head.size, hash: head.hash, keyId: this.signer.keyId, note };
      if (await this.checkpoints.insertIfAbsent(stored, tx)) {
        // The checkpoint log's leaf (docs/contract.md §18), committed with the checkpoint or not at all.
        const leaf = { chainId, chainSize: head.size, note, leafHash: leafHash(Buffer.from(note, 'utf8')) };
        await this.log.appendLeaf(leaf, tx);
        return note;
      }
      // A concurrent request stored this size first (it saw the same head: we both hold the lock),
      // or a row not signed by us holds it, which is passed over: this note is not stored, the next is.
      const first = await this.checkpoints.findLatest(chainId, head.size, tx);
      if (first && !this.signedByUs(chainId, first)) return note;
      if (!first || first.size !== head.size || first.hash !== head.hash) throw this.refuse(chainId, head, first);
      return this.asCurrent(chainId, first);
    }, 'READ COMMITTED');
  }

  /**
   * The latest stored checkpoint the service signed: what a new one must extend. Only a signature
   * confirms (the key or a retired one, the row matching its note): a row whose signature does not
   * verify was forged and is passed over, neither trusted nor fatal (whole-chain verification
   * reports it). A genuine one above the head still stops signing: events were removed.
   */
  private async latestSigned(chainId: string, tx: Db): Promise<CheckpointRow | null> {
    for (let atMost = Number.MAX_SAFE_INTEGER; atMost >= 0;) {
      const row = await this.checkpoints.findLatest(chainId, atMost, tx);
      if (!row || this.signedByUs(chainId, row)) return row;
      atMost = row.size - 1;
    }
    return null;
  }

  private signedByUs(chainId: string, row: CheckpointRow): boolean {
    const opened = verifyChainCheckpoint(row.note, this.signer.verifiers);
    return (
      opened.ok &&
      opened.checkpoint.chainId === chainId &&
      opened.checkpoint.size === row.size &&
      opened.checkpoint.hash === row.hash
    );
  }

  /**
   * The stored tree's root at the head's size, read in one query with the nodes at the head and,
   * when a smaller tree was signed before, the consistency proof from it. A tree that disagrees
   * with the events at the head is not signed (events or head rewritten, stored tree not): the
   * head's leaf (derived from its event) must be the chain head's hash, and the lowest stored node
   * near the head (at LOWEST_STORED_LEVEL, the last one ending at or before the head) must be the
   * parent of its two children as the events give them (the levels below are derived from them).
   */
  private async readTree(
    chainId: string,
    head: { size: number; hash: string; firstPosition: number },
    signedSize: number | null,
    tx: Db,
  ): Promise<Tree> {
    if (head.size === 0) return { root: emptyRoot().toString('hex'), proof: [] };
    // The consistency plan is empty unless a smaller tree was signed (from 0 or from the head's size).
    // After a prune (docs/contract.md §14) the checks near the head look only at retained events; the tree
    // still proves consistency from any size ≥ the number pruned (the sweep signs the head before it
    // prunes, so the latest signed size is never smaller).
    const pruned = head.firstPosition - 1;
    const from = Math.min(signedSize !== null && signedSize >= pruned ? signedSize : 0, head.size);
    const headRetained = head.size > pruned;
    // Without a retained head, the root's plan again in the leaf's place (nothing to compare it with).
    const plans = [
      rootPlan(head.size),
      consistencyPlan(from, head.size),
      headRetained ? nodePlan({ level: 0, index: head.size - 1 }) : rootPlan(head.size),
    ];
    const level = LOWEST_STORED_LEVEL;
    const near = Math.floor(head.size / 2 ** level) - 1; // the stored node (level, near), if any
    if (near >= 0 && near * 2 ** level >= pruned)
      plans.push(
        nodePlan({ level, index: near }),
        nodePlan({ level: level - 1, index: 2 * near }),
        nodePlan({ level: level - 1, index: 2 * near + 1 }),
      );
    const [[root], proof, [leaf], [parent] = [], [left] = [], [right] = []] = (await resolvePlans(
      plans,
      this.nodes.reader(chainId, tx),
    )) as [Buffer[], Buffer[], Buffer[], Buffer[]?, Buffer[]?, Buffer[]?];
    if (
      (headRetained && !leaf!.equals(eventLeafHash(head.hash))) ||
      (parent && !parent.equals(nodeHash(left!, right!)))
    ) {
      const message =
        `Refusing to sign chain ${chainId} at size ${head.size}: the stored Merkle tree disagrees with the events at the chain head. ` +
        'The chain or its tree was altered; run GET /v1/chain/:chainId/verify.';
      throw new AppError('INTERNAL_ERROR', message, { chainId, size: head.size });
    }
    return { root: root!.toString('hex'), proof };
  }

  /** The tree may only be signed if it grew from the latest signed one: `proof` is the consistency proof from the stored nodes. */
  private assertExtends(chainId: string, head: Head, latest: CheckpointRow, proof: Buffer[]): void {
    const signedSize = latest.size;
    if (signedSize >= head.size) throw this.refuse(chainId, head, latest);
    const [signedRoot, root] = [Buffer.from(latest.hash, 'hex'), Buffer.from(head.hash, 'hex')];
    if (!verifyConsistency(signedSize, head.size, signedRoot, root, proof)) throw this.refuse(chainId, head, latest);
  }

  /** A note signed by an earlier key is signed again, identically in content, by the current one. */
  private asCurrent(chainId: string, stored: CheckpointRow): string {
    if (stored.keyId === this.signer.keyId) return stored.note;
    return this.signer.sign({ chainId, size: stored.size, hash: stored.hash });
  }

  /** A 500: the global filter logs it, which is what an operator must see. */
  private refuse(chainId: string, head: Head, signed: CheckpointRow | null): AppError {
    const message =
      `Refusing to sign chain ${chainId} at size ${head.size}: it is inconsistent with the checkpoint signed at size ${signed?.size ?? '?'}. ` +
      'The chain was altered after that checkpoint; run GET /v1/chain/:chainId/verify.';
    return new AppError('INTERNAL_ERROR', message, { chainId, size: head.size, signedSize: signed?.size ?? 0 });
  }
}
