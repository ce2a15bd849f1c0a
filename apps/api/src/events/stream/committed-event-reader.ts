import type { EventFilters, EventRecord, StreamKey, TailWindow } from '@app/database';
import type { StreamPosition } from './stream-position';
import { pause } from '../../common/pause';

/** One event read, and the position right after it (a live tail's SSE id). */
export interface CommittedEvent {
  event: EventRecord;
  position: StreamPosition;
}

export interface CommittedPage {
  events: CommittedEvent[];
  /**
   * The page reached what was committed when it was read: asking again at once would find little
   * or nothing, so a reader waits its poll interval. False while behind (a full page, or the end of
   * a window that closed before now): the next page is read at once.
   */
  caughtUp: boolean;
}

export interface PageLimits {
  /** Events of the first page, and the least any page asks for. */
  min: number;
  /** Events a page grows to while the reader is behind. */
  max: number;
  /** About this many bytes of events per page at most: large events keep pages small. */
  bytes: number;
}

/** One read of a window: what EventTailRepository.committedBetween answers, and what a shared read adds. */
export interface CommittedRead {
  until: string;
  events: EventRecord[];
  /** The limit the page was read with, when not the one asked for (a read shared with another reader). */
  limit?: number;
  /**
   * Asked for everything committed now, the page was read up to an earlier snapshot instead (a reader
   * joining others that read from there): it is not caught up, its next page is read at once.
   */
  aligned?: boolean;
}

/** Where pages come from: EventTailRepository, or reads shared between readers (delivery/shared-pages.ts). */
export interface CommittedSource {
  committedBetween(accountId: string, filters: EventFilters, window: TailWindow, limit: number): Promise<CommittedRead>;
}

/**
 * Pages start at 100 events (a tail that is caught up reads a poll's worth) and double while they
 * come back full, up to 2,000 or about 2 MiB of events: a reader that is behind catches up in few
 * queries, each of which scans its whole window (committedBetween sorts it), and a page of the
 * largest events (32 KiB of context) stays as small as it always was.
 */
export const DEFAULT_PAGE_LIMITS: PageLimits = { min: 100, max: 2_000, bytes: 2 * 1024 * 1024 };

/** How many events of a full page are measured to size the next one. */
const SAMPLED = 16;

/**
 * Reads an account's matching events in the order they committed (docs/contract.md §13), page by page from
 * a position, each exactly once, each chain in position order: the committed-snapshot windows of
 * EventTailRepository.committedBetween (docs/architecture.md, "The live tail"). It knows nothing of
 * HTTP: the live tail writes its pages as SSE, and anything else that delivers events as they
 * commit can read them the same way. It holds no connection between pages.
 */
export class CommittedEventReader {
  private pageSize: number;

  constructor(
    private readonly events: CommittedSource,
    private readonly accountId: string,
    private readonly filters: EventFilters,
    private current: StreamPosition,
    private readonly limits: PageLimits = DEFAULT_PAGE_LIMITS,
  ) {
    this.pageSize = limits.min;
  }

  /** Where the reader stands: the position after the last event read, or the start of the next window. */
  get position(): StreamPosition {
    return this.current;
  }

  /** How many events the next page asks for. */
  get nextPageSize(): number {
    return this.pageSize;
  }

  /** The next page: the rest of the current window, or of everything committed now. */
  async next(): Promise<CommittedPage> {
    const window = this.current;
    const read = await this.events.committedBetween(this.accountId, this.filters, window, this.pageSize);
    const { until, events } = read;
    const limit = read.limit ?? this.pageSize;
    const page = events.map((event) => {
      this.current = { since: window.since, until, after: keyOf(event) };
      return { event, position: this.current };
    });
    if (events.length < limit) {
      // The window is exhausted; the next one starts at its end. If it ended at a snapshot taken
      // before this read (a resumed position, or a window read in pages), more may be waiting.
      this.current = { since: until, until: null, after: null };
      return { events: page, caughtUp: window.until === null && read.aligned !== true };
    }
    this.pageSize = grownPageSize(limit, events, this.limits);
    return { events: page, caughtUp: false };
  }

  /**
   * Every page from the position on: each page at once while behind, then one every `pollMs`,
   * until `signal` aborts (which also ends a wait at once). Empty pages are yielded too, so the
   * consumer can do its periodic work (heartbeats, key checks) between them. While behind, the
   * next page is read while the consumer handles this one (`position` is then already past it).
   */
  async *pages(pollMs: number, signal: AbortSignal): AsyncGenerator<CommittedPage, void, undefined> {
    let reading = this.readAhead();
    while (!signal.aborted) {
      const page = await reading;
      if (signal.aborted) return;
      if (!page.caughtUp) reading = this.readAhead();
      yield page;
      if (page.caughtUp) {
        await pause(pollMs, signal);
        if (signal.aborted) return;
        reading = this.readAhead();
      }
    }
  }

  /** next(), started now and awaited later: a failure the consumer never awaits (it stopped) is not unhandled. */
  private readAhead(): Promise<CommittedPage> {
    const page = this.next();
    page.catch(() => undefined);
    return page;
  }
}

/** Each record's key, made once: readers that share a page (stream destinations) share its records. */
const keys = new WeakMap<EventRecord, StreamKey>();

function keyOf(event: EventRecord): StreamKey {
  let key = keys.get(event);
  if (key === undefined) {
    key = { time: event.timestamp.toISOString(), chainId: event.chainId, position: event.position };
    keys.set(event, key);
  }
  return key;
}

/** Twice the last size, but no more than `limits.bytes` of events the size of the page's first few. */
export function grownPageSize(size: number, events: readonly EventRecord[], limits: PageLimits): number {
  const sample = events.slice(0, SAMPLED);
  const average = sample.reduce((sum, event) => sum + approximateBytes(event), 0) / Math.max(sample.length, 1);
  const byBytes = Math.floor(limits.bytes / Math.max(average, 1));
  return Math.max(limits.min, Math.min(size * 2, limits.max, byBytes));
}

/** About what an event weighs as JSON: its context (up to 32 KiB) dominates the rest (~300 bytes). */
export function approximateBytes(event: EventRecord): number {
  const texts =
    (event.actor?.length ?? 0) + event.action.length + (event.resource?.length ?? 0) + event.chainName.length;
  return 300 + texts + (event.context === null ? 0 : JSON.stringify(event.context).length);
}
