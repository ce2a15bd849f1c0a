import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppError } from '@app/common';
import { ChainEntity } from '@app/database';
import { computeEventHash } from '@app/hashing';
import { ChainAudit } from './chain-audit';
import { CHAIN_ID } from './chain-id';
import { ChainReader, StoredEvent } from './chain-reader';
import { CheckpointSigner } from './checkpoint-signer';
import { ChainVerificationView } from './dto/chain-verification.view';

/** Rows per keyset page: large enough to amortise a round trip, small enough to keep memory flat. */
export const VERIFY_PAGE_SIZE = 5000;

/**
 * GET /v1/chain/:chainId/verify. Walks the chain up to the head read at the start, page by page
 * (the next page is fetched while this one is hashed), and holds it against every stored
 * checkpoint; then re-reads the head to find checkpoints and events above it. Appends may go on
 * meanwhile: events up to the first head never change, and later ones are left for the next run.
 */
@Injectable()
export class ChainVerificationService {
  constructor(
    @InjectRepository(ChainEntity) private readonly chains: Repository<ChainEntity>,
    private readonly reader: ChainReader,
    private readonly signer: CheckpointSigner,
  ) {}

  async verify(accountId: string, chainId: string): Promise<{ data: ChainVerificationView }> {
    const chain = CHAIN_ID.test(chainId) ? await this.chains.findOneBy({ id: chainId, accountId }) : null;
    if (!chain) throw AppError.notFound(`Chain ${chainId}`);
    const audit = new ChainAudit(chain, this.signer.verifier);
    const head = { position: chain.lastPosition, hash: chain.lastHash };
    await this.walk(audit, chain.id, head.position);
    audit.checkHead(head);
    const now = await this.reader.headFacts(chain.id);
    audit.checkpointsAboveHead(now.checkpointsAbove, now.smallestAbove, now.position);
    audit.eventsBeyondHead(now.eventsBeyond, now.firstBeyond, now.position);
    return { data: audit.result(new Date()) };
  }

  private async walk(audit: ChainAudit, chainId: string, headPosition: number): Promise<void> {
    let checkpointFloor = -1;
    let next = this.prefetch(chainId, 0, headPosition);
    for (;;) {
      const page = await next;
      const full = page.length === VERIFY_PAGE_SIZE;
      const pageEnd = full ? page[page.length - 1]!.position : headPosition;
      if (full) next = this.prefetch(chainId, pageEnd, headPosition);
      const byPosition = new Map<number, StoredEvent>();
      for (const event of page) {
        audit.addEvent({ ...event, computedHash: computeEventHash(event) });
        byPosition.set(event.position, event);
      }
      for (const checkpoint of await this.reader.checkpoints(chainId, checkpointFloor, pageEnd)) {
        audit.addCheckpoint(checkpoint, byPosition.get(checkpoint.size) ?? null);
      }
      checkpointFloor = pageEnd;
      if (!full) return;
    }
  }

  /** Starts reading a page; a failure is observed when the page is awaited, never unhandled. */
  private prefetch(chainId: string, after: number, upTo: number): Promise<StoredEvent[]> {
    const page = this.reader.eventPage(chainId, after, upTo, VERIFY_PAGE_SIZE);
    page.catch(() => undefined);
    return page;
  }
}
