import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { AppError, toPage } from '@app/common';
import { EventEntity } from '@app/database';
import { AppendQueue } from './append/append-queue';
import { CreateEventDto, DEFAULT_CHAIN } from './dto/create-event.dto';
import { EventView } from './dto/event.view';
import { ListEventsQuery } from './dto/list-events.query';
import { eventsQuery, keysetBefore } from './event-query';
import { toEventView } from './event.mapper';

@Injectable()
export class EventsService {
  constructor(
    private readonly queue: AppendQueue,
    @InjectRepository(EventEntity) private readonly events: Repository<EventEntity>,
  ) {}

  async append(accountId: string, dto: CreateEventDto): Promise<{ data: EventView }> {
    const { event, chainName } = await this.queue.append({
      accountId,
      chainName: dto.chain ?? DEFAULT_CHAIN,
      actor: dto.actor,
      action: dto.action,
      resource: dto.resource ?? null,
      context: dto.context ?? null,
    });
    return { data: toEventView(event, chainName) };
  }

  /** Newest first by (timestamp, id); the cursor is the last row's key. */
  async list(accountId: string, query: ListEventsQuery): Promise<{ data: EventView[]; nextCursor?: string }> {
    const qb = eventsQuery(this.events, accountId, query).orderBy('e.timestamp', 'DESC').addOrderBy('e.id', 'DESC').limit(query.limit + 1);
    if (query.cursor) keysetBefore(qb, query.cursor);
    const rows = await qb.getMany();
    const page = toPage(rows, query.limit, (e) => ({ time: e.timestamp.toISOString(), id: e.id }));
    return { data: page.items.map((e) => toEventView(e, e.chain!.name)), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  async get(accountId: string, id: string): Promise<{ data: EventView }> {
    const event = await this.findOwned(accountId, id);
    return { data: toEventView(event, event.chain!.name) };
  }

  /** An event of this account, or 404 (also for another account's event). */
  async findOwned(accountId: string, id: string): Promise<EventEntity> {
    const event = await this.events.findOne({ where: { id, accountId }, relations: { chain: true } });
    if (!event) throw AppError.notFound(`Event ${id}`);
    return event;
  }
}
