import type { EventRecord, EventTailRepository, StreamKey, TailWindow } from '@app/database';
import { CommittedEventReader } from '../../events/stream/committed-event-reader';
import { SharedPages } from './shared-pages';

/**
 * committedBetween over events in memory, as in committed-event-reader.spec.ts: a snapshot is the
 * number of commits so far; a window holds the events committed after `since` and up to `until`.
 * `hold` keeps the next reads in flight until `release()`.
 */
class CommitLog {
  readonly committed: { commit: number; event: EventRecord }[] = [];
  readonly queries: TailWindow[] = [];
  failNext = false;
  private commits = 0;
  private positions = new Map<string, number>();
  private held: (() => void)[] | null = null;

  commit(count: number): void {
    this.commits++;
    for (let i = 0; i < count; i++) {
      const chainId = `chn_${i % 3}`;
      const position = (this.positions.get(chainId) ?? 0) + 1;
      this.positions.set(chainId, position);
      this.committed.push({
        commit: this.commits,
        event: {
          id: `evt_${chainId}_${position}`,
          accountId: 'acc_1',
          chainId,
          chainName: chainId,
          position,
          actor: 'a',
          action: 'x.y',
          resource: null,
          context: null,
          timestamp: new Date(Date.UTC(2026, 0, 1) + this.committed.length),
          previousHash: '0'.repeat(64),
          hash: '0'.repeat(64),
          saltSeed: null,
          erasure: null,
          schema: null,
        },
      });
    }
  }

  get snapshot(): string {
    return String(this.commits);
  }

  hold(): void {
    this.held = [];
  }

  release(): void {
    const held = this.held ?? [];
    this.held = null;
    held.forEach((go) => go());
  }

  readonly repository = {
    committedBetween: (_account: string, _filters: object, window: TailWindow, limit: number) => {
      this.queries.push(window);
      if (this.failNext) {
        this.failNext = false;
        return Promise.reject(new Error('connection lost'));
      }
      // The snapshot is taken when the statement runs: at once, or when released.
      const answer = () => {
        const until = window.until ?? this.snapshot;
        const key = (e: EventRecord) => [e.timestamp.toISOString(), e.chainId, e.position] as const;
        const events = this.committed
          .filter(({ commit }) => commit > Number(window.since) && commit <= Number(until))
          .map(({ event }) => event)
          .filter((e) => window.after === null || compare(key(e), keyTuple(window.after)) > 0)
          .sort((a, b) => compare(key(a), key(b)))
          .slice(0, limit);
        return { until, events };
      };
      if (this.held === null) return Promise.resolve(answer());
      return new Promise((resolve) => this.held!.push(() => resolve(answer())));
    },
  } as unknown as EventTailRepository;
}

const keyTuple = (k: StreamKey) => [k.time, k.chainId, k.position] as const;

function compare(a: readonly [string, string, number], b: readonly [string, string, number]): number {
  if (a[0] !== b[0]) return a[0] < b[0] ? -1 : 1;
  if (a[1] !== b[1]) return a[1] < b[1] ? -1 : 1;
  return a[2] - b[2];
}

const ids = (events: { event: EventRecord }[]) => events.map(({ event }) => event.id);

describe('SharedPages', () => {
  it('gives readers at the same position one read, the same records, and leaves each its own position', async () => {
    const log = new CommitLog();
    const pages = new SharedPages(log.repository, 60_000);
    const start = { since: log.snapshot, until: null, after: null };
    log.commit(5);
    const a = new CommittedEventReader(pages.source('acc_1', null), 'acc_1', {}, start);
    const b = new CommittedEventReader(pages.source('acc_1', null), 'acc_1', {}, start);
    log.hold();
    const [pa, pb] = [a.next(), b.next()];
    log.release();
    const [first, second] = await Promise.all([pa, pb]);
    expect(log.queries).toHaveLength(1);
    expect(ids(first.events)).toHaveLength(5);
    expect(second.events.map(({ event }) => event)).toEqual(first.events.map(({ event }) => event));
    expect(second.events[0]!.event).toBe(first.events[0]!.event);
    // Another `q`, or another account, reads for itself.
    const other = new CommittedEventReader(pages.source('acc_1', 'action:x.y'), 'acc_1', {}, start);
    await other.next();
    expect(log.queries).toHaveLength(2);
    // b reads on while a stays where it is: nobody waits for anybody.
    log.commit(2);
    expect(ids((await b.next()).events)).toHaveLength(2);
    expect(a.position).toEqual({ since: '1', until: null, after: null });
  });

  it('serves a reader the page another read with a smaller limit: it reads on after it, missing and repeating nothing', async () => {
    const log = new CommitLog();
    const pages = new SharedPages(log.repository, 60_000);
    const start = { since: log.snapshot, until: null, after: null };
    log.commit(250);
    const limits = { min: 100, max: 2000, bytes: 1 << 30 };
    const first = new CommittedEventReader(pages.source('acc_1', null), 'acc_1', {}, start, limits);
    await first.next(); // reads (0, now) with a limit of 100: full, the window is 0–1 after its 100th event
    const late = new CommittedEventReader(
      pages.source('acc_1', null),
      'acc_1',
      {},
      start,
      { ...limits, min: 1000 }, // asks for 1,000
    );
    const seen: string[] = [];
    for (;;) {
      const page = await late.next();
      seen.push(...ids(page.events));
      if (page.caughtUp) break;
    }
    expect(seen).toHaveLength(250);
    expect(new Set(seen).size).toBe(250);
    expect(log.queries[1]).toEqual(expect.objectContaining({ since: '0', until: '1' })); // after the shared page
  });

  it('does not share a failed read: the next asker reads again', async () => {
    const log = new CommitLog();
    const pages = new SharedPages(log.repository, 60_000);
    const start = { since: log.snapshot, until: null, after: null };
    log.commit(3);
    const a = new CommittedEventReader(pages.source('acc_1', null), 'acc_1', {}, start);
    log.failNext = true;
    await expect(a.next()).rejects.toThrow('connection lost');
    const b = new CommittedEventReader(pages.source('acc_1', null), 'acc_1', {}, start);
    expect(ids((await b.next()).events)).toHaveLength(3);
    expect(log.queries).toHaveLength(2);
    expect(pages.size).toBe(1);
  });

  it('keeps a read no longer than keepMs', async () => {
    const log = new CommitLog();
    const pages = new SharedPages(log.repository, 20);
    const start = { since: log.snapshot, until: null, after: null };
    log.commit(3);
    await new CommittedEventReader(pages.source('acc_1', null), 'acc_1', {}, start).next();
    await new Promise((resolve) => setTimeout(resolve, 40));
    log.commit(1);
    const late = await new CommittedEventReader(pages.source('acc_1', null), 'acc_1', {}, start).next();
    expect(ids(late.events)).toHaveLength(4); // read again, now
    expect(log.queries).toHaveLength(2);
  });

  it('a reader in another window (behind, or back from a backoff) reads at once while its group waits for a read', async () => {
    const log = new CommitLog();
    const pages = new SharedPages(log.repository, 60_000);
    log.commit(3);
    const behind = new CommittedEventReader(
      pages.source('acc_1', null),
      'acc_1',
      {},
      {
        since: '0',
        until: null,
        after: null,
      },
    );
    expect(ids((await behind.next()).events)).toHaveLength(3);
    log.hold();
    const group = new CommittedEventReader(pages.source('acc_1', null), 'acc_1', {}, behind.position).next();
    // The held read is in flight; a reader at another position is not held back by it.
    log.release();
    log.commit(1);
    const alone = await new CommittedEventReader(
      pages.source('acc_1', null),
      'acc_1',
      {},
      {
        since: '0',
        until: '1',
        after: null,
      },
    ).next();
    expect(ids(alone.events)).toHaveLength(3);
    await group;
  });

  it('aligns caught-up readers: one behind its group reads up to where the group stands, then shares its reads', async () => {
    const log = new CommitLog();
    // Reads of "now" kept 30 ms: b comes later than that.
    const pages = new SharedPages(log.repository, 60_000, 30);
    const source = () => pages.source('acc_1', null);
    const a = new CommittedEventReader(source(), 'acc_1', {}, { since: log.snapshot, until: null, after: null });
    log.commit(2);
    await a.next(); // a stands at 1
    const b = new CommittedEventReader(source(), 'acc_1', {}, a.position);
    log.commit(3);
    const seenByA = ids((await a.next()).events); // a moves to 2 (the group's frontier)
    log.commit(4);
    await new Promise((resolve) => setTimeout(resolve, 40));
    // b, at 1, is caught up there: it reads (1, 2), not (1, now), and is not caught up after it.
    const aligned = await b.next();
    expect(ids(aligned.events)).toEqual(seenByA);
    expect(aligned.caughtUp).toBe(false);
    expect(b.position).toEqual(a.position);
    // Now at the same position: their next read is one.
    const before = log.queries.length;
    const [pa, pb] = [await a.next(), await b.next()];
    expect(log.queries.length).toBe(before + 1);
    expect(ids(pb.events)).toEqual(ids(pa.events));
    expect(ids(pa.events)).toHaveLength(4);
  });

  it('does not align a reader whose snapshot came from elsewhere (a stored position): it reads on by itself', async () => {
    const log = new CommitLog();
    const pages = new SharedPages(log.repository, 60_000, -1);
    log.commit(2);
    const a = new CommittedEventReader(
      pages.source('acc_1', null),
      'acc_1',
      {},
      { since: '0', until: null, after: null },
    );
    await a.next();
    log.commit(1);
    await a.next(); // the frontier is 2
    const stored = new CommittedEventReader(
      pages.source('acc_1', null),
      'acc_1',
      {},
      {
        since: '0',
        until: null,
        after: null,
      },
    );
    const page = await stored.next();
    expect(log.queries.at(-1)).toEqual({ since: '0', until: null, after: null });
    expect(page.caughtUp).toBe(true);
  });

  it('many readers at many positions, commits in between: each reads every event once, each chain in order, in fewer reads', async () => {
    const log = new CommitLog();
    const pages = new SharedPages(log.repository, 60_000);
    const readers = Array.from({ length: 10 }, () => {
      log.commit(7);
      return {
        reader: new CommittedEventReader(
          pages.source('acc_1', null),
          'acc_1',
          {},
          {
            since: log.snapshot,
            until: null,
            after: null,
          },
        ),
        seen: [] as string[],
        from: log.committed.length,
      };
    });
    let random = 42;
    const next = () => (random = (random * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 200; round++) {
      if (next() < 0.3) log.commit(1 + Math.floor(next() * 5));
      const r = readers[Math.floor(next() * readers.length)]!;
      r.seen.push(...ids((await r.reader.next()).events));
    }
    for (const r of readers) {
      const want = log.committed.slice(r.from).map(({ event }) => event.id);
      // A kept read of "now" is as old as it is: the reader reaches the end within a few reads, then reads nothing more.
      for (let i = 0; i < 100 && r.seen.length < want.length; i++) r.seen.push(...ids((await r.reader.next()).events));
      r.seen.push(...ids((await r.reader.next()).events));
      expect(r.seen).toEqual(expect.arrayContaining(want));
      expect(r.seen).toHaveLength(want.length);
      for (const chain of ['chn_0', 'chn_1', 'chn_2']) {
        const positions = r.seen.filter((id) => id.startsWith(`evt_${chain}_`)).map((id) => Number(id.split('_')[3]));
        expect(positions).toEqual([...positions].sort((x, y) => x - y));
      }
    }
    const asked = readers.length + 200;
    expect(log.queries.length).toBeLessThan(asked);
  });
});
