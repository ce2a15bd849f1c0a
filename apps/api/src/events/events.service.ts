import { Injectable } from '@nestjs/common';
import { AppError, EVENT_ID, EVENTS_CURSOR } from '@app/common';
import { EventRecord, EventSearchRepository } from '@app/database';
import { AppendQueue } from './append/append-queue';
import { AppendRequest, StaleSchemas } from './append/append-request';
import { Idempotency, Replay, Written } from './append/idempotent-ledger';
import { CreateEventBatchDto } from './dto/create-event-batch.dto';
import { CreateEventDto, DEFAULT_CHAIN } from './dto/create-event.dto';
import { EventView } from './dto/event.view';
import { ListEventsQuery } from './dto/list-events.query';
import { toEventView } from './event.mapper';
import { IdempotencyService } from './idempotency.service';
import { toEventFilters } from './event-filters';
import { BoundedReads } from '../reads/bounded-reads';
import { SchemaGate } from '../schemas/schema-gate';

/**
 * An append's answer: its body as JSON text, built once. A keyed request's text is the one stored
 * for its Idempotency-Key, so a replay sends those very bytes (nothing parsed or stringified again).
 */
export interface AppendOutcome {
  json: string;
  replayed: boolean;
}

/**
 * How many times an append is checked again when its account's schemas changed while it waited
 * (StaleSchemas): a version saved at each attempt, beyond that a 503 to retry.
 */
const SCHEMA_ATTEMPTS = 5;

/** Where a single event's schema violation is: `context.amount`. */
const singleField = (_index: number, path: string): string => path;
/** Where a batch item's is: `events[3].context.amount`. */
const batchField = (index: number, path: string): string => `events[${index}]${path === '' ? '' : `.${path}`}`;

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
    private readonly schemas: SchemaGate,
  ) {}

  append(accountId: string, dto: CreateEventDto, idempotencyKey?: string): Promise<AppendOutcome> {
    return this.appendAll('POST /v1/events', [newEvent(accountId, dto)], toJson, idempotencyKey, singleField);
  }

  /** docs/contract.md §9: all or nothing, in request order; one Idempotency-Key covers the whole batch. */
  appendBatch(accountId: string, dto: CreateEventBatchDto, idempotencyKey?: string): Promise<AppendOutcome> {
    const events = dto.events.map((item) => newEvent(accountId, item));
    return this.appendAll('POST /v1/events/batch', events, toBatchJson, idempotencyKey, batchField);
  }

  /**
   * Appends `events` as one unit through the queue and answers `respond(their records)`, JSON text.
   * With an Idempotency-Key (docs/contract.md §7, §21), IdempotencyService runs it once: the answer
   * stored under the key in the events' own transaction is the one sent, and replayed later. The
   * events are checked against their account's action schemas inside it (`write`), so a replay
   * checks nothing and the key's digest covers only what the client sent.
   */
  private async appendAll(
    endpoint: string,
    events: AppendRequest[],
    respond: (events: EventRecord[]) => string,
    idempotencyKey: string | undefined,
    fieldOf: (index: number, path: string) => string,
  ): Promise<AppendOutcome> {
    const outcome =
      idempotencyKey === undefined
        ? await this.write(events, null, fieldOf)
        : await this.idempotency.once(endpoint, events, idempotencyKey, respond, (idempotency) =>
            this.write(events, idempotency, fieldOf),
          );
    if (outcome instanceof Replay) return { json: outcome.json, replayed: true };
    return { json: outcome.answer ?? respond(outcome.events), replayed: false };
  }

  /**
   * Checks the events against their account's action schemas (SchemaGate: a 400 for an enforced
   * one they break), then queues them, as one unit, with the check. If a schema version was saved
   * meanwhile (the transaction found another generation under the chains' locks: StaleSchemas),
   * it rolled back whole, the unit's Idempotency-Key lock and all, and nothing was stored: the
   * account's schemas are read again and the events checked and queued anew, still inside
   * IdempotencyService.once (the key stays marked in flight here, and is not looked up again).
   */
  private async write(
    events: AppendRequest[],
    idempotency: Idempotency | null,
    fieldOf: (index: number, path: string) => string,
  ): Promise<Written | Replay> {
    const accountId = events[0]!.accountId;
    for (let attempt = 1; ; attempt++) {
      const checks = await this.schemas.check(accountId, events, fieldOf);
      let outcome: Written | Replay;
      try {
        outcome = await this.queue.append({
          events: events.map((event, i) => ({ ...event, schema: checks[i] })),
          idempotency,
        });
      } catch (error) {
        if (!(error instanceof StaleSchemas)) throw error;
        this.schemas.forget(accountId);
        if (attempt < SCHEMA_ATTEMPTS) continue;
        throw AppError.unavailable('The account’s action schemas kept changing during this append; retry shortly.', 1);
      }
      if (!(outcome instanceof Replay)) this.schemas.stored(checks);
      return outcome;
    }
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
