import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import type { Response } from 'express';
import type { AuthenticatedKey } from '@app/auth';
import { AppConfig, AppError, requestIdOf } from '@app/common';
import { ApiKeysRepository, EventRecord, EventsRepository } from '@app/database';
import { ShutdownService } from '../../lifecycle/shutdown.service';
import { toEventView } from '../event.mapper';
import { StreamEventsQuery } from '../dto/stream-events.query';
import { decodeStreamPosition, encodeStreamPosition, StreamPosition } from './stream-position';
import { toEventFilters } from '../event-filters';

/** Events read per query: a window with more is read in pages. */
const PAGE_SIZE = 100;
/**
 * A reader this far behind (bytes written but not yet taken) is cut; it resumes with Last-Event-ID.
 * No page is read while the socket's buffer is full, so this bounds what one stream holds.
 */
const MAX_BUFFERED_BYTES = 4 * 1024 * 1024;
/** How often an open stream asks whether its key still works (revoked: closed within 5 s, contract §13). */
const KEY_CHECK_MS = 2_000;

/**
 * The live tail, GET /v1/events/stream (contract §13). Each stream polls the database for events
 * whose transactions committed since its last snapshot (EventsRepository.committedBetween), so it
 * sees the appends of every instance, each exactly once, each chain in position order, whatever
 * order transactions commit in (docs/architecture.md, "The live tail"). Nothing is shared between
 * streams but the pool: a stream holds no connection between polls.
 */
@Injectable()
export class EventStreamService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(EventStreamService.name);
  private readonly open = new Map<string, Set<() => void>>();

  constructor(
    private readonly events: EventsRepository,
    private readonly apiKeys: ApiKeysRepository,
    private readonly config: AppConfig,
    private readonly shutdown: ShutdownService,
  ) {}

  async stream(key: AuthenticatedKey, query: StreamEventsQuery, lastEventId: string | undefined, res: Response) {
    const { accountId } = key;
    const resumeFrom = query.last_event_id ?? lastEventId;
    const field = query.last_event_id !== undefined ? 'last_event_id' : 'Last-Event-ID';
    let position: StreamPosition =
      resumeFrom === undefined
        ? { since: await this.events.currentSnapshot(), until: null, after: null }
        : decodeStreamPosition(accountId, resumeFrom, field);
    const streams = this.open.get(accountId) ?? new Set();
    if (streams.size >= this.config.streamsPerAccount) {
      throw new AppError(
        'RATE_LIMITED',
        `At most ${this.config.streamsPerAccount} streams per account may be open at once.`,
        {},
        { 'Retry-After': '5' },
      );
    }
    const filters = toEventFilters(query);

    let closed = false;
    let timer: NodeJS.Timeout | undefined;
    let lastWrite = Date.now();
    let lastKeyCheck = Date.now();
    let stalledSince: number | null = null;
    /** Ends the stream; `cut` drops what is still buffered (a reader that stopped reading). */
    const close = (cut = false) => {
      if (closed) return;
      closed = true;
      clearTimeout(timer);
      streams.delete(close);
      if (streams.size === 0) this.open.delete(accountId);
      if (cut) res.destroy();
      else if (!res.writableEnded) res.end();
    };
    streams.add(close);
    this.open.set(accountId, streams);
    res.on('close', close);

    // Connection: close: once a stream ends, its connection goes too (nothing for a stop to wait out).
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'X-Accel-Buffering': 'no',
      Connection: 'close',
    });
    res.write(': stream open\n\n');
    res.flushHeaders();

    const send = (event: EventRecord, at: StreamPosition) => {
      const id = encodeStreamPosition(accountId, at);
      res.write(`id: ${id}\nevent: event\ndata: ${JSON.stringify(toEventView(event))}\n\n`);
      lastWrite = Date.now();
    };

    const poll = async (): Promise<void> => {
      if (closed) return;
      // A stop has begun: end now, so the HTTP drain is not held by a stream; the client resumes elsewhere.
      if (this.shutdown.stopping) return close();
      try {
        if (Date.now() - lastKeyCheck >= KEY_CHECK_MS) {
          lastKeyCheck = Date.now();
          if (!(await this.apiKeys.isActive(key.keyId))) return close();
        }
        // A reader that takes nothing for EXPORT_STALL_TIMEOUT_SECONDS, or falls too far behind, is cut.
        stalledSince = res.writableNeedDrain ? (stalledSince ?? Date.now()) : null;
        const stalled =
          stalledSince !== null && Date.now() - stalledSince > this.config.exportStallTimeoutSeconds * 1000;
        if (stalled || res.writableLength > MAX_BUFFERED_BYTES) return close(true);
        if (!res.writableNeedDrain) {
          // Read windows until one is exhausted (a window with more than a page is read page by page).
          for (;;) {
            const { until, events } = await this.events.committedBetween(accountId, filters, position, PAGE_SIZE);
            if (closed) return;
            for (const event of events) {
              const after = { time: event.timestamp.toISOString(), chainId: event.chainId, position: event.position };
              position = { since: position.since, until, after };
              send(event, position);
            }
            if (events.length < PAGE_SIZE) {
              position = { since: until, until: null, after: null };
              break;
            }
            if (res.writableNeedDrain) break;
          }
        }
        if (Date.now() - lastWrite >= this.config.streamHeartbeatSeconds * 1000) {
          res.write(': heartbeat\n\n');
          lastWrite = Date.now();
        }
      } catch (error) {
        // The database went away: the client resumes with its Last-Event-ID.
        this.logger.warn({ msg: `An event stream stopped: ${(error as Error).message}`, reqId: requestIdOf(res.req) });
        return close();
      }
      if (!closed) timer = setTimeout(() => void poll(), this.config.streamPollMilliseconds);
    };
    await poll();
  }

  /** Every open stream ends before the pools close; clients resume with their Last-Event-ID. */
  beforeApplicationShutdown(): void {
    for (const streams of this.open.values()) for (const close of [...streams]) close();
  }
}
