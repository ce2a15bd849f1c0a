import { Injectable } from '@nestjs/common';
import { AppError, EVENT_ID, EVENTS_CURSOR } from '@app/common';
import { EventRecord, EventSearchRepository } from '@app/database';
import { AppendQueue } from './append/append-queue';
import { AppendRequest } from './append/append-request';
import { Replay } from './append/idempotent-ledger';
import { CreateEventBatchDto } from './dto/create-event-batch.dto';
import { CreateEventDto, DEFAULT_CHAIN } from './dto/create-event.dto';
import { EventView } from './dto/event.view';
import { ListEventsQuery } from './dto/list-events.query';
import { toEventView } from './event.mapper';
import { IdempotencyService } from './idempotency.service';
import { toEventFilters } from './event-filters';
import { BoundedReads } from '../reads/bounded-reads';

/**
 * An append's answer: its body as JSON text, built once. A keyed request's text is the one stored
 * for its Idempotency-Key, so a replay sends those very bytes (nothing parsed or stringified again).
 */
export interface AppendOutcome {
  json: string;
  replayed: boolean;
}

const toBody = (event: EventRecord): { data: EventView } => ({ data: toEventView(event) });
const toBatchJson = (events: EventRecord[]): string => JSON.stringify({ data: events.map(toEventView) });
const toJson = ([event]: EventRecord[]): string => JSON.stringify(toBody(event!));

@Injectable()
export class EventsService {
  constructor(
    private readonly queue: AppendQueue,
    private readonly idempotency: IdempotencyService,
    private readonly events: EventSearchRepository,
    private readonly reads: BoundedReads,
  ) {}

  append(accountId: string, dto: CreateEventDto, idempotencyKey?: string): Promise<AppendOutcome> {
    return this.appendAll('POST /v1/events', [newEvent(accountId, dto)], toJson, idempotencyKey);
  }

  /** docs/contract.md §9: all or nothing, in request order; one Idempotency-Key covers the whole batch. */
  appendBatch(accountId: string, dto: CreateEventBatchDto, idempotencyKey?: string): Promise<AppendOutcome> {
    const events = dto.events.map((item) => newEvent(accountId, item));
    return this.appendAll('POST /v1/events/batch', events, toBatchJson, idempotencyKey);
  }

  /**
   * Appends `events` as one unit through the queue and answers `respond(their records)`, JSON text.
   * With an Idempotency-Key (docs/contract.md §7, §21), IdempotencyService runs it once: the answer
   * stored under the key in the events' own transaction is the one sent, and replayed later.
   */
  private async appendAll(
    endpoint: string,
    events: AppendRequest[],
    respond: (events: EventRecord[]) => string,
    idempotencyKey: string | undefined,
  ): Promise<AppendOutcome> {
    const outcome =
      idempotencyKey === undefined
        ? await this.queue.append({ events, idempotency: null })
        : await this.idempotency.once(endpoint, events, idempotencyKey, respond, (idempotency) =>
            this.queue.append({ events, idempotency }),
          );
    if (outcome instanceof Replay) return { json: outcome.json, replayed: true };
    return { json: outcome.answer ?? respond(outcome.events), replayed: false };
  }

  /** Newest first by (timestamp, id); the cursor is the last row's key. A bounded read (BoundedReads: 429, 422). */
  async list(accountId: string, query: ListEventsQuery): Promise<{ data: EventView[]; nextCursor?: string }> {
    const filters = toEventFilters(query);
    const cursor = query.cursor ? EVENTS_CURSOR.decode(accountId, query.cursor) : undefined;
    const rows = await this.reads.run(accountId, (db) =>
      this.events.list(accountId, filters, query.limit + 1, cursor, db),
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

function newEvent(accountId: string, dto: CreateEventDto): AppendRequest {
  return {
    accountId,
    chainName: dto.chain ?? DEFAULT_CHAIN,
    actor: dto.actor,
    action: dto.action,
    resource: dto.resource ?? null,
    context: dto.context ?? null,
  };
}
