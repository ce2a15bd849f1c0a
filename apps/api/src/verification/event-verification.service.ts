import { Injectable } from '@nestjs/common';
import { AppError, EVENT_ID, Metrics } from '@app/common';
import { ChainsRepository, EventVerificationRepository } from '@app/database';
import { judgeEvent } from '@app/verification';
import { VerificationResultView } from './dto/verification-result.view';
import { toVerificationResult } from './verification.mapper';

/**
 * GET /v1/events/:id/verify: one event against its stored predecessor, or, for the first retained
 * event of a pruned chain (docs/contract.md §14), against the last pruned event's hash and time the chain kept.
 */
@Injectable()
export class EventVerificationService {
  constructor(
    private readonly events: EventVerificationRepository,
    private readonly chains: ChainsRepository,
    private readonly metrics: Metrics,
  ) {}

  /** Verifies one event of this account against its stored predecessor; others' events are 404. */
  async verify(accountId: string, id: string): Promise<{ data: VerificationResultView }> {
    const event = EVENT_ID.test(id) ? await this.events.findForVerification(accountId, id) : null;
    if (!event) throw AppError.notFound(`Event ${id}`);
    const predecessor =
      event.position > 1
        ? ((await this.events.findLinkFacts(accountId, event.chainId, event.position - 1)) ??
          (await this.chains.prunedLinkFacts(accountId, event.chainId, event.position)))
        : null;
    // Each erased field is held against the erasures the database recorded (docs/contract.md §17).
    const recorded = event.erasure === null ? null : await this.events.recordedErasures(accountId, id);
    const judged = judgeEvent(event, predecessor, recorded);
    this.metrics.eventVerified();
    return { data: toVerificationResult(event, judged, new Date()) };
  }
}
