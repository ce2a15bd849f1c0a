import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppError, CHAIN_ID } from '@app/common';
import { ChainEntity } from '@app/database';
import { computeEventHash } from '@app/hashing';
import { ChainAudit } from './chain-audit';
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
    await this.walk(audit, chain, head.position);
    audit.checkHead(head);
    const now = await this.reader.headFacts(chain.id);
    audit.checkpointsAboveHead(now.checkpointsAbove, now.smallestAbove, now.position);
    audit.eventsBeyondHead(now.eventsBeyond, now.firstBeyond, now.position);
    return { data: audit.result(new Date()) };
  }

  private async walk(audit: ChainAudit, chain: ChainEntity, headPosition: number): Promise<void> {
    let checkpointFloor = -1;
    let next = this.prefetch(chain, 0, headPosition);
    for (;;) {
      const page = await next;
      const full = page.length === VERIFY_PAGE_SIZE;
      const pageEnd = full ? page[page.length - 1]!.position : headPosition;
      if (full) next = this.prefetch(chain, pageEnd, headPosition);
      for (const event of page) audit.addEvent(event, computeEventHash(event));
      for (const checkpoint of await this.reader.checkpoints(chain.id, checkpointFloor, pageEnd)) {
        audit.addCheckpoint(checkpoint, eventAt(page, checkpoint.size));
      }
      checkpointFloor = pageEnd;
      if (!full) return;
    }
  }

  /** Starts reading a page; a failure is observed when the page is awaited, never unhandled. */
  private prefetch(chain: ChainEntity, after: number, upTo: number): Promise<StoredEvent[]> {
    const page = this.reader.eventPage(chain, after, upTo, VERIFY_PAGE_SIZE);
    page.catch(() => undefined);
    return page;
  }
}

/** The event at `position` in a page sorted by position (binary search: pages may have gaps). */
function eventAt(page: readonly StoredEvent[], position: number): StoredEvent | null {
  let low = 0;
  let high = page.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const candidate = page[middle]!;
    if (candidate.position === position) return candidate;
    if (candidate.position < position) low = middle + 1;
    else high = middle - 1;
  }
  return null;
}
