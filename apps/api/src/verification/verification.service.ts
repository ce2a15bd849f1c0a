import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppError, EVENT_ID } from '@app/common';
import { EventEntity } from '@app/database';
import { VerificationResultView } from './dto/verification-result.view';
import { checkIntegrity } from './event-integrity';
import { toVerificationResult } from './verification.mapper';

@Injectable()
export class VerificationService {
  constructor(@InjectRepository(EventEntity) private readonly events: Repository<EventEntity>) {}

  /** Verifies one event of this account against its stored predecessor; others' events are 404. */
  async verify(accountId: string, id: string): Promise<{ data: VerificationResultView }> {
    const event = EVENT_ID.test(id) ? await this.events.findOneBy({ id, accountId }) : null;
    if (!event) throw AppError.notFound(`Event ${id}`);
    const predecessor =
      event.position > 1
        ? await this.events.findOne({
            select: { hash: true },
            where: { accountId, chainId: event.chainId, position: event.position - 1 },
          })
        : null;
    return { data: toVerificationResult(event, checkIntegrity(event, predecessor), new Date()) };
  }
}
