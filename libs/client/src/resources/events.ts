import { createWriteStream } from 'node:fs';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { setTimeout as sleep } from 'node:timers/promises';
import { AuditTrailError } from '../errors';
import { Http } from '../http';
import { everyItem } from '../pages';
import { fullJitterDelay } from '../recorder/backoff';
import { serverSentEvents } from '../sse';
import type { RecordedEvent } from '../schema-types/recorded-event';
import type {
  AuditEvent,
  EventFilters,
  ExportQuery,
  InclusionProof,
  NewEvent,
  Stats,
  StatsQuery,
  TailFilters,
  VerificationResult,
} from '../types';

/** An event of the live tail and the id to resume after it (the SSE id, opaque). */
export interface TailedEvent {
  lastEventId: string;
  event: AuditEvent;
}

export interface TailOptions {
  /** Resume right after this event (an id the tail gave): sent as Last-Event-ID. */
  lastEventId?: string;
  /** Ends the iteration. */
  signal?: AbortSignal;
  /** Reconnect after a dropped connection or a retryable answer (default true), resuming with Last-Event-ID. */
  reconnect?: boolean;
}

/** /v1/events: append, read, search, verify, prove, export, follow (docs/contract.md §4, §9, §10, §13). */
export class EventsResource {
  constructor(private readonly http: Http) {}

  /**
   * POST /v1/events; with an idempotency key a retry appends nothing more (§7). Typed by the account's
   * enforced schemas when the file of `audit-trail-client types` is in the program (RecordedEvent).
   */
  async append<A extends string>(
    event: RecordedEvent<A>,
    options: { idempotencyKey?: string } = {},
  ): Promise<AuditEvent> {
    return (await this.http.call('post', '/v1/events', { body: event, ...options })).body.data;
  }

  /** POST /v1/events/batch: 1–1,000 events, all or nothing, answered in request order (§9). */
  async appendBatch(events: NewEvent[], options: { idempotencyKey?: string } = {}): Promise<AuditEvent[]> {
    return (await this.http.call('post', '/v1/events/batch', { body: { events }, ...options })).body.data;
  }

  async get(id: string): Promise<AuditEvent> {
    return (await this.http.call('get', '/v1/events/{id}', { path: { id } })).body.data;
  }

  /** Every matching event, newest first, over as many pages as it takes. */
  list(filters: EventFilters = {}): AsyncGenerator<AuditEvent> {
    return everyItem((cursor) => this.page({ ...filters, cursor }));
  }

  /** One page of GET /v1/events. */
  async page(query: EventFilters & { cursor?: string }): Promise<{ data: AuditEvent[]; nextCursor?: string }> {
    return (await this.http.call('get', '/v1/events', { query })).body;
  }

  async verify(id: string): Promise<VerificationResult> {
    return (await this.http.call('get', '/v1/events/{id}/verify', { path: { id } })).body.data;
  }

  /** The inclusion proof of the event in its chain's tree of `size` events (default: the current size). */
  async proof(id: string, size?: number): Promise<InclusionProof> {
    return (await this.http.call('get', '/v1/events/{id}/proof', { path: { id }, query: { size } })).body.data;
  }

  async stats(query: StatsQuery): Promise<Stats> {
    return (await this.http.call('get', '/v1/stats/events', { query })).body;
  }

  /** GET /v1/events/export as a stream of its bytes (JSON or CSV as asked), read as it arrives. */
  async export(query: ExportQuery): Promise<Readable> {
    const res = await this.http.raw('get', '/v1/events/export', { query });
    if (!res.body) throw new AuditTrailError(res.status, 'BAD_RESPONSE', 'the export answer has no body');
    return Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
  }

  /** The export written to `file` (created or replaced), never held in memory whole. */
  async exportToFile(query: ExportQuery, file: string): Promise<void> {
    await pipeline(await this.export(query), createWriteStream(file));
  }

  /**
   * The live tail (GET /v1/events/stream): every matching event appended from now (or after
   * `lastEventId`), as it is appended. A dropped connection is resumed with Last-Event-ID, so
   * nothing is skipped or repeated (§13); a refusal that is not retryable ends it with the error.
   */
  async *tail(filters: TailFilters = {}, options: TailOptions = {}): AsyncGenerator<TailedEvent> {
    let lastEventId = options.lastEventId;
    for (let attempt = 0; !options.signal?.aborted; attempt++) {
      try {
        const res = await this.http.raw('get', '/v1/events/stream', {
          query: filters,
          headers: lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId },
          signal: options.signal,
        });
        if (!res.body) throw new AuditTrailError(res.status, 'BAD_RESPONSE', 'the stream answer has no body');
        for await (const message of serverSentEvents(chunksOf(res.body))) {
          if (message.event !== 'event') continue;
          attempt = 0;
          lastEventId = message.id;
          yield { lastEventId, event: JSON.parse(message.data) as AuditEvent };
        }
      } catch (error) {
        if (options.signal?.aborted) return;
        if (options.reconnect === false || !isRetryable(error)) throw error;
        const after = error instanceof AuditTrailError && error.retryAfter !== null ? error.retryAfter * 1000 : 0;
        await sleep(Math.max(after, fullJitterDelay(attempt, { baseMs: 200, capMs: 10_000 })));
      }
    }
  }
}

/**
 * The body's chunks as they are read: no read-ahead (Readable.fromWeb reads ahead, and a connection
 * cut then discards what it had read but not yet given), so every event the service sent before a cut
 * is given, and the resume starts after it.
 */
async function* chunksOf(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    // The caller stopped (or the stream ended): let the connection go.
    await reader.cancel().catch(() => undefined);
  }
}

/** Network errors (a connection refused or cut mid-body), 408, 429, 5xx: worth another try. */
export function isRetryable(error: unknown): boolean {
  if (error instanceof AuditTrailError)
    return error.status === 0 || error.status === 408 || error.status === 429 || error.status >= 500;
  // undici reports a body cut short as a TypeError ("terminated"); a bad event's JSON is not worth a retry.
  return error instanceof TypeError;
}
