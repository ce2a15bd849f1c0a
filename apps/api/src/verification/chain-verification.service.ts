import { Injectable } from '@nestjs/common';
import { AppConfig, AppError, CHAIN_ID, Metrics } from '@app/common';
import {
  ChainRecord,
  ChainsRepository,
  CheckpointsRepository,
  MerkleNodesRepository,
  ReadReplica,
  RetentionLogRepository,
} from '@app/database';
import { frontierIds, MerkleNode } from '@app/hashing';
import { ChainAudit, PrunedPrefix, WindowReport } from '@app/verification';
import { CheckpointSigner } from '../checkpoints/checkpoint-signer';
import { ChainVerificationView } from './dto/chain-verification.view';
import { WindowInspector } from './window-inspector';
import { AccountSlots } from '../common/account-slots';

/**
 * GET /v1/chain/:chainId/verify. Walks the chain up to the head read at the start in windows of
 * VERIFY_PAGE_SIZE positions, several read and hashed at once (WindowInspector), folded in order,
 * and holds it against every stored checkpoint; then re-reads the head to find checkpoints and
 * events above it. Appends may go on meanwhile: events up to the first head never change, and
 * later ones are left for the next run. Memory holds at most the windows in flight.
 *
 * A pruned chain (docs/contract.md §14) is walked from its first retained position: the first event's link
 * is checked against the kept hash, the tree starts from the kept nodes, and every checkpoint of a
 * size from the number pruned up is checked (smaller ones cover only deleted events).
 *
 * A walk of a long chain is the most expensive request there is, so an account runs at most
 * VERIFY_CONCURRENCY at once (more get 429), and a walk whose client went away stops.
 */
@Injectable()
export class ChainVerificationService {
  private readonly windowSize: number;
  /** Verifications running now, by account (VERIFY_CONCURRENCY each). */
  private readonly running: AccountSlots;

  constructor(
    private readonly chains: ChainsRepository,
    private readonly nodes: MerkleNodesRepository,
    private readonly signer: CheckpointSigner,
    private readonly inspector: WindowInspector,
    config: AppConfig,
    private readonly metrics: Metrics,
    private readonly retentionLog: RetentionLogRepository,
    private readonly checkpoints: CheckpointsRepository,
    private readonly reads: ReadReplica,
  ) {
    this.windowSize = config.verifyPageSize;
    const perAccount = config.verifyConcurrency;
    this.running = new AccountSlots(
      () => ({ perAccount }),
      (_scope, running, limit) =>
        new AppError(
          'RATE_LIMITED',
          `This account is already running ${running} whole-chain verification(s); retry when one has finished.`,
          { limit },
          { 'Retry-After': '1' },
        ),
    );
  }

  /** `clientGone` aborts when nobody waits for the answer any more. */
  verify(accountId: string, chainId: string, clientGone?: AbortSignal): Promise<{ data: ChainVerificationView }> {
    return this.running.run(accountId, () => this.verifyChain(accountId, chainId, clientGone));
  }

  private async verifyChain(
    accountId: string,
    chainId: string,
    clientGone?: AbortSignal,
  ): Promise<{ data: ChainVerificationView }> {
    const chain = CHAIN_ID.test(chainId) ? await this.chains.findOwned(accountId, chainId) : null;
    if (!chain) throw AppError.notFound(`Chain ${chainId}`);
    const audit = new ChainAudit(chain, this.signer.verifiers, await this.prunedPrefix(chain));
    const head = { position: chain.lastPosition, hash: chain.lastHash };
    // Windows may be read on DATABASE_READ_URL's replica once it has replayed past this head (docs/contract.md §21).
    const floor = this.inspector.readsReplica ? await this.reads.floor() : null;
    await this.walk(audit, chain, head.position, floor, clientGone);
    audit.checkHead(head);
    const now = await this.chains.headFacts(chain.id);
    audit.checkpointsAboveHead(now.checkpointsAbove, now.smallestAbove, now.position);
    audit.eventsBeyondHead(now.eventsBeyond, now.firstBeyond, now.position);
    audit.nodesBeyondHead(now.nodesBeyond, now.position);
    await this.checkPruneRecord(audit, chain.id);
    const result = audit.result(new Date());
    this.metrics.chainVerified(result.valid, result.checkedEvents);
    return { data: result };
  }

  /** The prunes the database recorded, and the stored checkpoints they relied on (docs/contract.md §14). */
  private async checkPruneRecord(audit: ChainAudit, chainId: string): Promise<void> {
    const prunes = await this.retentionLog.prunes(chainId);
    const sizes = prunes.flatMap((p) => (p.checkpointSize === null ? [] : [p.checkpointSize]));
    const covering = (await this.checkpoints.findSizes(chainId, sizes)).map(({ size, hash, note }) => ({
      size,
      hash,
      note,
    }));
    audit.checkPruneRecord(prunes, covering);
  }

  /** What a prune kept (null for a chain never pruned): the last pruned event's facts and the tree's nodes over it. */
  private async prunedPrefix(chain: ChainRecord): Promise<PrunedPrefix | null> {
    const position = chain.firstPosition - 1;
    if (position === 0 || chain.prunedHash === null || chain.prunedTimestamp === null) return null;
    const ids = frontierIds(position);
    const spineIds = frontierIds(position - 1);
    const kept = await this.nodes.nodes(chain.id, [...ids, ...spineIds]);
    const hex = (n: MerkleNode) => ({ level: n.level, index: n.index, hash: n.hash.toString('hex') });
    const complete = kept.length === ids.length + spineIds.length;
    return {
      position,
      hash: chain.prunedHash,
      timestamp: chain.prunedTimestamp.toISOString(),
      nodes: complete ? kept.slice(0, ids.length).map(hex) : null,
      spine: complete ? kept.slice(ids.length).map(hex) : null,
    };
  }

  /**
   * Window k holds positions (from + k·size, from + (k+1)·size], `from` being the number pruned (0
   * for most chains); a chain with nothing retained still has one (for the checkpoints of size `from`).
   */
  private async walk(
    audit: ChainAudit,
    chain: ChainRecord,
    headPosition: number,
    floor: string | null,
    clientGone?: AbortSignal,
  ): Promise<void> {
    const from = chain.firstPosition - 1;
    const count = Math.max(1, Math.ceil((headPosition - from) / this.windowSize));
    const inFlight: Promise<WindowReport>[] = [];
    const start = (k: number): void => {
      if (k >= count) return;
      const window = this.inspector.inspect(
        {
          chainId: chain.id,
          accountId: chain.accountId,
          after: from + k * this.windowSize,
          upTo: Math.min(headPosition, from + (k + 1) * this.windowSize),
          first: k === 0,
        },
        floor,
      );
      window.catch(() => undefined); // observed when awaited below; never unhandled if an earlier one fails first
      inFlight.push(window);
    };
    for (let k = 0; k < this.inspector.windowsInFlight; k++) start(k);
    try {
      for (let k = 0; k < count; k++) {
        const window = await inFlight.shift()!;
        // No new window starts. Nobody reads this answer, and the filter does not log a 503.
        if (clientGone?.aborted)
          throw AppError.unavailable('The client closed the connection; the verification was stopped.');
        start(k + this.inspector.windowsInFlight);
        audit.addWindow(window);
      }
    } finally {
      // On failure, the windows still in flight end before the request does: no reads outlive it.
      await Promise.allSettled(inFlight);
    }
  }
}
