import { Injectable } from '@nestjs/common';
import { AppError, EVENT_ID, EVENTS_CURSOR } from '@app/common';
import { EventRecord, EventsRepository } from '@app/database';
import { AppendQueue } from './append/append-queue';
import { AppendRequest } from './append/append-request';
import { CreateEventDto, DEFAULT_CHAIN } from './dto/create-event.dto';
import { EventView } from './dto/event.view';
import { ListEventsQuery } from './dto/list-events.query';
import { toEventView } from './event.mapper';
import { IdempotencyService } from './idempotency.service';

export interface AppendOutcome {
  body: { data: EventView };
  replayed: boolean;
}

const toBody = (event: EventRecord): { data: EventView } => ({ data: toEventView(event) });

@Injectable()
export class EventsService {
  constructor(
    private readonly queue: AppendQueue,
    private readonly idempotency: IdempotencyService,
    private readonly events: EventsRepository,
  ) {}

  async append(accountId: string, dto: CreateEventDto, idempotencyKey?: string): Promise<AppendOutcome> {
    const event = {
      accountId,
      chainName: dto.chain ?? DEFAULT_CHAIN,
      actor: dto.actor,
      action: dto.action,
      resource: dto.resource ?? null,
      context: dto.context ?? null,
    };
    let idempotency: AppendRequest['idempotency'] = null;
    if (idempotencyKey !== undefined) {
      IdempotencyService.validate(idempotencyKey);
      const { accountId: _, ...body } = event;
      const claim = await this.idempotency.claim(accountId, idempotencyKey, IdempotencyService.digest(body));
      if (claim.kind === 'replay') return { body: claim.body as { data: EventView }, replayed: true };
      idempotency = { key: idempotencyKey, token: claim.token, respond: toBody };
    }
    try {
      const appended = await this.queue.append({ ...event, idempotency });
      // A keyed append's response was built once, in its transaction, to be stored: it answers too.
      return {
        body: (appended.response as { data: EventView } | undefined) ?? toBody(appended.event),
        replayed: false,
      };
    } catch (error) {
      if (idempotency) await this.idempotency.release(accountId, idempotency.key, idempotency.token);
      throw error;
    }
  }

  /** Newest first by (timestamp, id); the cursor is the last row's key. */
  async list(accountId: string, query: ListEventsQuery): Promise<{ data: EventView[]; nextCursor?: string }> {
    const rows = await this.events.list(
      accountId,
      {
        actor: query.actor,
        action: query.action,
        resource: query.resource,
        chainId: query.chain_id,
        after: query.after === undefined ? undefined : new Date(query.after),
        before: query.before === undefined ? undefined : new Date(query.before),
      },
      query.limit + 1,
      query.cursor ? EVENTS_CURSOR.decode(accountId, query.cursor) : undefined,
    );
    const page = EVENTS_CURSOR.page(accountId, rows, query.limit, (e) => ({
      time: e.timestamp.toISOString(),
      id: e.id,
    }));
    return { data: page.items.map(toEventView), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  }

  /** An event of this account, or 404 (also for another account's event or a malformed id). */
  async get(accountId: string, id: string): Promise<{ data: EventView }> {
    const event = EVENT_ID.test(id) ? await this.events.findOwned(accountId, id) : null;
    if (!event) throw AppError.notFound(`Event ${id}`);
    return toBody(event);
  }
}
