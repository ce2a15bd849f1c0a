import type { EventRecord, EventTailRepository, StreamKey } from '@app/database';
import { approximateBytes, CommittedEventReader, DEFAULT_PAGE_LIMITS } from './committed-event-reader';
import type { StreamPosition } from './stream-position';

/**
 * committedBetween over events in memory: a "snapshot" is the number of commits so far, and a
 * window holds the events committed after `since` and up to `until` (now when null), in
 * (timestamp, chain, position) order after `after`. The SQL itself is covered by test/stream.e2e-spec.ts.
 */
class CommitLog {
  readonly committed: { commit: number; event: EventRecord }[] = [];
  queries: number[] = [];
  private commits = 0;

  commit(events: EventRecord[]): void {
    this.commits++;
    for (const event of events) this.committed.push({ commit: this.commits, event });
  }

  get snapshot(): string {
    return String(this.commits);
  }

  readonly repository = {
    committedBetween: (
      _account: string,
      _filters: object,
      window: { since: string; until: string | null; after: StreamKey | null },
      limit: number,
    ) => {
      this.queries.push(limit);
      const until = window.until ?? this.snapshot;
      const key = (e: EventRecord) => [e.timestamp.toISOString(), e.chainId, e.position] as const;
      const rows = this.committed
        .filter(({ commit }) => commit > Number(window.since) && commit <= Number(until))
        .map(({ event }) => event)
        .filter(
          (e) =>
            window.after === null ||
            compare(key(e), [window.after.time, window.after.chainId, window.after.position]) > 0,
        )
        .sort((a, b) => compare(key(a), key(b)))
        .slice(0, limit);
      return Promise.resolve({ until, events: rows });
    },
  } as unknown as EventTailRepository;
}

function compare(a: readonly [string, string, number], b: readonly [string, string, number]): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
  return a[2] - b[2];
}

let nextPosition = new Map<string, number>();
function events(count: number, contextBytes = 0): EventRecord[] {
  return Array.from({ length: count }, (_, i) => {
    const chainId = `chn_${i % 4}`;
    const position = (nextPosition.get(chainId) ?? 0) + 1;
    nextPosition.set(chainId, position);
    return {
      id: `evt_${chainId}_${position}`,
      accountId: 'acc_1',
      chainId,
      chainName: `c${i % 4}`,
      position,
      actor: 'a',
      action: 'x.y',
      resource: null,
      context: contextBytes === 0 ? null : { pad: 'x'.repeat(contextBytes) },
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, 0, position)),
      previousHash: '0'.repeat(64),
      hash: '0'.repeat(64),
      saltSeed: null,
      erasure: null,
      schema: null,
    };
  });
}

/** Every page until one is caught up, in order. */
async function readAll(reader: CommittedEventReader) {
  const pages = [];
  for (;;) {
    const page = await reader.next();
    pages.push(page);
    if (page.caughtUp) return pages;
  }
}

describe('CommittedEventReader', () => {
  beforeEach(() => (nextPosition = new Map()));

  it('reads a backlog in pages that double while they come back full, each event once, each chain in order', async () => {
    const log = new CommitLog();
    const start: StreamPosition = { since: log.snapshot, until: null, after: null };
    const backlog = events(10_000);
    for (let b = 0; b < 10; b++) log.commit(backlog.slice(b * 1_000, (b + 1) * 1_000));
    const reader = new CommittedEventReader(log.repository, 'acc_1', {}, start);
    const pages = await readAll(reader);
    // 9,100 in full pages, the window's last 900, then (the window having ended at its first read) what
    // committed since: nothing, so caught up.
    expect(log.queries).toEqual([100, 200, 400, 800, 1_600, 2_000, 2_000, 2_000, 2_000, 2_000]);
    expect(pages.map((p) => p.events.length)).toEqual([100, 200, 400, 800, 1_600, 2_000, 2_000, 2_000, 900, 0]);
    expect(pages.map((p) => p.caughtUp)).toEqual([...Array<boolean>(9).fill(false), true]);
    const read = pages.flatMap((p) => p.events.map((e) => e.event));
    expect(read.map((e) => e.id).sort()).toEqual(backlog.map((e) => e.id).sort());
    const last = new Map<string, number>();
    for (const event of read) {
      expect(event.position).toBeGreaterThan(last.get(event.chainId) ?? 0);
      last.set(event.chainId, event.position);
    }
    // Each event carries the position right after it; the window's end moves the reader to the next one.
    const lastEvent = pages.at(-2)!.events.at(-1)!;
    expect(lastEvent.position).toEqual({
      since: start.since,
      until: log.snapshot,
      after: {
        time: lastEvent.event.timestamp.toISOString(),
        chainId: lastEvent.event.chainId,
        position: lastEvent.event.position,
      },
    });
    expect(reader.position).toEqual({ since: log.snapshot, until: null, after: null });
  });

  it('resumed inside a window, reads its rest and then what committed since without waiting', async () => {
    const log = new CommitLog();
    const start: StreamPosition = { since: log.snapshot, until: null, after: null };
    log.commit(events(150));
    const first = new CommittedEventReader(log.repository, 'acc_1', {}, start);
    const page = await first.next();
    expect(page).toMatchObject({ caughtUp: false });
    const resumeAt = page.events[59]!.position;
    log.commit(events(30));
    const resumed = new CommittedEventReader(log.repository, 'acc_1', {}, resumeAt);
    const rest = await resumed.next();
    // The rest of the old window (90 of its 150), which ended before the 30 committed since.
    expect(rest.events).toHaveLength(90);
    expect(rest.caughtUp).toBe(false);
    const since = await resumed.next();
    expect(since.events).toHaveLength(30);
    expect(since.caughtUp).toBe(true);
    const read = [...page.events.slice(0, 60), ...rest.events, ...since.events].map((e) => e.event.id);
    expect(read).toHaveLength(180);
    expect(read.sort()).toEqual(log.committed.map(({ event }) => event.id).sort());
  });

  it('keeps pages of large events small: about 2 MiB of events at most, never under 100', async () => {
    const log = new CommitLog();
    const start = { since: log.snapshot, until: null, after: null };
    log.commit(events(3_000, 8_000));
    log.commit(events(3_000, 32_000));
    const reader = new CommittedEventReader(log.repository, 'acc_1', {}, start);
    await reader.next();
    const byBytes = Math.floor(DEFAULT_PAGE_LIMITS.bytes / approximateBytes(events(1, 8_000)[0]!));
    expect(reader.nextPageSize).toBe(Math.min(200, byBytes));
    await reader.next();
    expect(reader.nextPageSize).toBe(byBytes);
    while (reader.nextPageSize !== 100) await reader.next();
    // 32 KB contexts: a page of 100 is already above the mark, and 100 is the floor.
    expect(log.queries.at(-1)).toBeLessThanOrEqual(byBytes);
  });

  it('yields pages at once while behind, waits the poll interval once caught up, and stops at once when aborted', async () => {
    const log = new CommitLog();
    const start = { since: log.snapshot, until: null, after: null };
    log.commit(events(700));
    const reader = new CommittedEventReader(log.repository, 'acc_1', {}, start);
    const ended = new AbortController();
    const started = Date.now();
    const seen: number[] = [];
    const reading = (async () => {
      for await (const page of reader.pages(60_000, ended.signal)) {
        seen.push(page.events.length);
        if (page.caughtUp) setTimeout(() => ended.abort(), 50);
      }
    })();
    await reading;
    // 100 + 200 + 400 full, the end of that window (0), then what committed since (0): caught up; the
    // 60 s wait after it ended with the abort.
    expect(seen).toEqual([100, 200, 400, 0, 0]);
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('reads again after the poll interval when caught up', async () => {
    const log = new CommitLog();
    const reader = new CommittedEventReader(
      log.repository,
      'acc_1',
      {},
      { since: log.snapshot, until: null, after: null },
    );
    const ended = new AbortController();
    const times: number[] = [];
    const started = Date.now();
    for await (const page of reader.pages(100, ended.signal)) {
      times.push(Date.now() - started);
      if (times.length === 1) log.commit(events(5));
      else {
        expect(page.events).toHaveLength(5);
        ended.abort();
      }
    }
    expect(times[1]).toBeGreaterThanOrEqual(95);
  });
});
