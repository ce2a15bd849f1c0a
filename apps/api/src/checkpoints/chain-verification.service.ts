import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppConfig, AppError, CHAIN_ID } from '@app/common';
import { ChainEntity } from '@app/database';
import { ChainAudit } from './chain-audit';
import { ChainReader } from './chain-reader';
import { WindowReport } from './chain-window';
import { CheckpointSigner } from './checkpoint-signer';
import { ChainVerificationView } from './dto/chain-verification.view';
import { WindowInspector } from './window-inspector';

/**
 * GET /v1/chain/:chainId/verify. Walks the chain up to the head read at the start in windows of
 * VERIFY_PAGE_SIZE positions, several read and hashed at once (WindowInspector), folded in order,
 * and holds it against every stored checkpoint; then re-reads the head to find checkpoints and
 * events above it. Appends may go on meanwhile: events up to the first head never change, and
 * later ones are left for the next run. Memory holds at most the windows in flight.
 */
@Injectable()
export class ChainVerificationService {
  private readonly windowSize: number;

  constructor(
    @InjectRepository(ChainEntity) private readonly chains: Repository<ChainEntity>,
    private readonly reader: ChainReader,
    private readonly signer: CheckpointSigner,
    private readonly inspector: WindowInspector,
    config: AppConfig,
  ) {
    this.windowSize = config.verifyPageSize;
  }

  async verify(accountId: string, chainId: string): Promise<{ data: ChainVerificationView }> {
    const chain = CHAIN_ID.test(chainId) ? await this.chains.findOneBy({ id: chainId, accountId }) : null;
    if (!chain) throw AppError.notFound(`Chain ${chainId}`);
    const audit = new ChainAudit(chain, this.signer.verifiers);
    const head = { position: chain.lastPosition, hash: chain.lastHash };
    await this.walk(audit, chain, head.position);
    audit.checkHead(head);
    const now = await this.reader.headFacts(chain.id);
    audit.checkpointsAboveHead(now.checkpointsAbove, now.smallestAbove, now.position);
    audit.eventsBeyondHead(now.eventsBeyond, now.firstBeyond, now.position);
    return { data: audit.result(new Date()) };
  }

  /** Window k holds positions (k·size, (k+1)·size]; an empty chain still has one (for checkpoints of size 0). */
  private async walk(audit: ChainAudit, chain: ChainEntity, headPosition: number): Promise<void> {
    const count = Math.max(1, Math.ceil(headPosition / this.windowSize));
    const inFlight: Promise<WindowReport>[] = [];
    const start = (k: number): void => {
      if (k >= count) return;
      const window = this.inspector.inspect({ chainId: chain.id, accountId: chain.accountId, after: k * this.windowSize, upTo: Math.min(headPosition, (k + 1) * this.windowSize) });
      window.catch(() => undefined); // observed when awaited below; never unhandled if an earlier one fails first
      inFlight.push(window);
    };
    for (let k = 0; k < this.inspector.windowsInFlight; k++) start(k);
    for (let k = 0; k < count; k++) {
      const window = await inFlight.shift()!;
      start(k + this.inspector.windowsInFlight);
      audit.addWindow(window);
    }
  }
}
