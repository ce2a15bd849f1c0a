import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppError, EVENT_ID, EVENTS_CURSOR } from '@app/common';
import { EventEntity } from '@app/database';
import { AppendQueue } from './append/append-queue';
import { CreateEventDto, DEFAULT_CHAIN } from './dto/create-event.dto';
import { EventView } from './dto/event.view';
import { ListEventsQuery } from './dto/list-events.query';
import { eventsQuery, keysetBefore, selectEventRows } from './event-query';
import { EventRecord, toEventView } from './event.mapper';
import { IdempotencyService } from './idempotency.service';

export interface AppendOutcome {
  body: { data: EventView };
  replayed: boolean;
}

@Injectable()
export class EventsService {
  constructor(
    private readonly queue: AppendQueue,
    private readonly idempotency: IdempotencyService,
    @InjectRepository(EventEntity) private readonly events: Repository<EventEntity>,
  ) {}

  async append(accountId: string, dto: CreateEventDto, idempotencyKey?: string): Promise<AppendOutcome> {
    const request = {
      accountId,
      chainName: dto.chain ?? DEFAULT_CHAIN,
      actor: dto.actor,
      action: dto.action,
      resource: dto.resource ?? null,
      context: dto.context ?? null,
      idempotencyKey: idempotencyKey ?? null,
    };
    if (idempotencyKey !== undefined) {
      IdempotencyService.validate(idempotencyKey);
      const { accountId: _, idempotencyKey: __, ...body } = request;
      const claim = await this.idempotency.claim(accountId, idempotencyKey, IdempotencyService.digest(body));
      if (claim.kind === 'replay') return { body: claim.body as { data: EventView }, replayed: true };
    }
    try {
      const { event, chainName } = await this.queue.append(request);
      return { body: { data: toEventView({ ...event, chainName }) }, replayed: false };
    } catch (error) {
      if (idempotencyKey !== undefined) await this.idempotency.release(accountId, idempotencyKey);
      throw error;
    }
  }

  /** Newest first by (timestamp, id); the cursor is the last row's key. */
  async list(accountId: string, query: ListEventsQuery): Promise<{ data: EventView[]; nextCursor?: string }> {
    const qb = selectEventRows(eventsQuery(this.events, accountId, query))
      .orderBy('e.timestamp', 'DESC')
      .addOrderBy('e.id', 'DESC')
      .limit(query.limit + 1);
    if (query.cursor) keysetBefore(qb, query.cursor);
    const rows = await qb.getRawMany<EventRecord>();
    const page = EVENTS_CURSOR.page(rows, query.limit, (e) => ({ time: e.timestamp.toISOString(), id: e.id }));
    return { data: page.items.map(toEventView), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  async get(accountId: string, id: string): Promise<{ data: EventView }> {
    const event = await this.findOwned(accountId, id);
    return { data: toEventView({ ...event, chainName: event.chain!.name }) };
  }

  /** An event of this account, or 404 (also for another account's event or a malformed id). */
  private async findOwned(accountId: string, id: string): Promise<EventEntity> {
    const event = EVENT_ID.test(id)
      ? await this.events.findOne({ where: { id, accountId }, relations: { chain: true } })
      : null;
    if (!event) throw AppError.notFound(`Event ${id}`);
    return event;
  }
}
