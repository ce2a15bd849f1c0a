import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import type { Response } from 'express';
import { AppConfig, AppError, requestIdOf } from '@app/common';
import { ApiKeysRepository, EventTailRepository } from '@app/database';
import { ShutdownService } from '../../lifecycle/shutdown.service';
import { toEventView } from '../event.mapper';
import { StreamEventsQuery } from '../dto/stream-events.query';
import { decodeStreamPosition, encodeStreamPosition, StreamPosition } from './stream-position';
import { toEventFilters } from '../event-filters';
import { CommittedEventReader } from './committed-event-reader';
import { drained } from './drained';

/**
 * A page is written in pieces of about this many characters: few writes (not one per event), and
 * what the socket has not taken yet stays near its buffer's mark plus one piece.
 */
const WRITE_CHARS = 64 * 1024;
/** How often an open stream asks whether its key still works (revoked: closed within 5 s, docs/contract.md §13). */
const KEY_CHECK_MS = 2_000;

/**
 * The live tail, GET /v1/events/stream (docs/contract.md §13). Each stream reads the events whose
 * transactions committed since its last snapshot (CommittedEventReader, over
 * EventTailRepository.committedBetween), so it sees the appends of every instance, each exactly once,
 * each chain in position order, whatever order transactions commit in (docs/architecture.md, "The
 * live tail"). While behind it reads the next page as soon as the socket has taken the last one;
 * once caught up it polls. Nothing is shared between streams but the pool: a stream holds no
 * connection between pages.
 */
@Injectable()
export class EventStreamService implements BeforeApplicationShutdown {
  private readonly logger = new Logger(EventStreamService.name);
  private readonly open = new Map<string, Set<() => void>>();

  constructor(
    private readonly events: EventTailRepository,
    private readonly apiKeys: ApiKeysRepository,
    private readonly config: AppConfig,
    private readonly shutdown: ShutdownService,
  ) {}

  /**
   * Streams the events of `accountId` (the account read: an operator's may be another's,
   * docs/contract.md §12) while `keyId` stays active; STREAMS_PER_ACCOUNT counts the account streamed.
   */
  async stream(
    { accountId, keyId }: { accountId: string; keyId: string },
    query: StreamEventsQuery,
    lastEventId: string | undefined,
    res: Response,
  ) {
    const resumeFrom = query.last_event_id ?? lastEventId;
    const field = query.last_event_id !== undefined ? 'last_event_id' : 'Last-Event-ID';
    const position: StreamPosition =
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
    const reader = new CommittedEventReader(this.events, accountId, toEventFilters(query), position);

    const ended = new AbortController();
    let keyCheck: NodeJS.Timeout | undefined = undefined;
    /** Ends the stream; `cut` drops what is still buffered (a reader that stopped reading). */
    const close = (cut = false) => {
      if (ended.signal.aborted) return;
      ended.abort();
      clearInterval(keyCheck);
      streams.delete(close);
      if (streams.size === 0) this.open.delete(accountId);
      if (cut) res.destroy();
      else if (!res.writableEnded) res.end();
    };
    streams.add(close);
    this.open.set(accountId, streams);
    res.on('close', () => close());
    const stopped = (error: Error) => {
      // The database went away: the client resumes with its Last-Event-ID.
      this.logger.warn({ msg: `An event stream stopped: ${error.message}`, reqId: requestIdOf(res.req) });
      close();
    };
    // Asked on a timer of its own: a stream waiting for a slow reader is closed on time too.
    keyCheck = setInterval(() => {
      this.apiKeys.isActive(keyId).then((active) => active || close(), stopped);
    }, KEY_CHECK_MS);

    // Connection: close: once a stream ends, its connection goes too (nothing for a stop to wait out).
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'X-Accel-Buffering': 'no',
      Connection: 'close',
    });
    res.write(': stream open\n\n');
    res.flushHeaders();

    let lastWrite = Date.now();
    const stallMs = this.config.exportStallTimeoutSeconds * 1000;
    /**
     * Writes `text`; when the socket's buffer is full, waits until the reader has taken it. A reader
     * that takes nothing for EXPORT_STALL_TIMEOUT_SECONDS is cut (it resumes with its last id), so a
     * stream holds at most its buffer and one piece. False once the stream has ended.
     */
    const write = async (text: string): Promise<boolean> => {
      lastWrite = Date.now();
      if (res.write(text)) return true;
      const outcome = await drained(res, stallMs, ended.signal);
      if (outcome === 'stalled') close(true);
      return outcome === 'drained' && !ended.signal.aborted;
    };
    const deliver = async () => {
      for await (const page of reader.pages(this.config.streamPollMilliseconds, ended.signal)) {
        // A stop has begun: end now, so the HTTP drain is not held by a stream; the client resumes elsewhere.
        if (this.shutdown.stopping) return close();
        let text = '';
        for (const { event, position: at } of page.events) {
          const id = encodeStreamPosition(accountId, at);
          text += `id: ${id}\nevent: event\ndata: ${JSON.stringify(toEventView(event))}\n\n`;
          if (text.length >= WRITE_CHARS) {
            if (!(await write(text))) return;
            text = '';
          }
        }
        if (text !== '' && !(await write(text))) return;
        if (Date.now() - lastWrite >= this.config.streamHeartbeatSeconds * 1000 && !(await write(': heartbeat\n\n')))
          return;
      }
    };
    void deliver().catch(stopped);
  }

  /** Every open stream ends before the pools close; clients resume with their Last-Event-ID. */
  beforeApplicationShutdown(): void {
    for (const streams of this.open.values()) for (const close of [...streams]) close();
  }
}
