import type { EventRecord, EventTailRepository, TailWindow } from '@app/database';
import { ErasureNotices } from '../../erasure/erasure-notices';
import { SharedPages } from './shared-pages';

/**
 * Threat model P10 on the streams' shared page reads: a read holds the values as they were when it
 * ran, so a reader that asks after an erasure committed must not be given one from before it (here:
 * dropped at once on this instance; elsewhere, no read is given out longer than keepMs from its start).
 */
function event(accountId: string, actor: string | null): EventRecord {
  return {
    id: `evt_${accountId}`,
    accountId,
    chainId: 'chn_1',
    chainName: 'default',
    position: 1,
    actor,
    action: 'x.y',
    resource: null,
    context: null,
    timestamp: new Date(Date.UTC(2026, 0, 1)),
    previousHash: '0'.repeat(64),
    hash: '0'.repeat(64),
    saltSeed: null,
    erasure: null,
    schema: null,
  };
}

/** What the database holds now, per account; `hold()` keeps the next reads in flight until `release()`. */
class Store {
  readonly actors = new Map<string, string | null>([
    ['acc_1', 'jane@example.com'],
    ['acc_2', 'joe@example.com'],
  ]);
  reads = 0;
  private held: (() => void)[] | null = null;

  hold(): void {
    this.held = [];
  }

  release(): void {
    const held = this.held ?? [];
    this.held = null;
    held.forEach((go) => go());
  }

  readonly repository = {
    committedBetween: async (accountId: string, _filters: object, window: TailWindow) => {
      this.reads++;
      // The read's snapshot is taken now, when it starts; it answers when released.
      const page = { until: window.until ?? '2', events: [event(accountId, this.actors.get(accountId) ?? null)] };
      if (this.held) await new Promise<void>((go) => this.held!.push(go));
      return page;
    },
  } as unknown as EventTailRepository;
}

const closed: TailWindow = { since: '1', until: '2', after: null };
const now: TailWindow = { since: '1', until: null, after: null };

function setUp(keepMs = 60_000) {
  const store = new Store();
  const pages = new SharedPages(store.repository, keepMs, keepMs);
  // As DeliveryEngine wires them; ErasureService calls `erased` once its transaction committed.
  const notices = new ErasureNotices();
  notices.listen((accountId) => pages.erased(accountId));
  const read = (accountId: string, window: TailWindow) =>
    pages.source(accountId, null).committedBetween(accountId, {}, window, 100);
  return { store, pages, notices, read };
}

describe('SharedPages and erasures (P10)', () => {
  it.each([
    ['a closed window', closed],
    ['everything committed now', now],
  ])('a kept read of %s is given to nobody who asks after an erasure of its account', async (_name, window) => {
    const { store, notices, read } = setUp();
    // Destination X of acc_1 reads: the event as it was.
    expect((await read('acc_1', window)).events[0]!.actor).toBe('jane@example.com');
    expect((await read('acc_1', window)).events[0]!.actor).toBe('jane@example.com'); // shared: one read
    expect(store.reads).toBe(1);
    // The erasure commits, then tells this instance.
    store.actors.set('acc_1', null);
    notices.erased('acc_1');
    // Destination Y of the same account and q asks for the same window after the erasure's 200.
    expect((await read('acc_1', window)).events[0]!.actor).toBeNull();
    expect(store.reads).toBe(2);
  });

  it('a read in flight when the erasure committed answers those who asked before, not those who ask after', async () => {
    const { store, notices, read } = setUp();
    store.hold();
    const before = read('acc_1', closed); // its snapshot: before the erasure
    store.actors.set('acc_1', null);
    notices.erased('acc_1');
    store.release();
    const after = read('acc_1', closed);
    expect((await before).events[0]!.actor).toBe('jane@example.com');
    expect((await after).events[0]!.actor).toBeNull();
    expect(store.reads).toBe(2);
  });

  it("keeps the reads of the other accounts: an erasure drops only its own account's", async () => {
    const { store, notices, read } = setUp();
    await read('acc_1', closed);
    await read('acc_2', closed);
    store.actors.set('acc_1', null);
    notices.erased('acc_1');
    await read('acc_2', closed);
    expect(store.reads).toBe(2); // acc_2's read was shared
  });

  it('an erasure on another instance (not told): no read, settled or in flight, is given out keepMs after it started', async () => {
    const { store, read } = setUp(30);
    await read('acc_1', closed); // settled
    store.hold();
    const inFlight = read('acc_1', now);
    store.actors.set('acc_1', null); // committed elsewhere: no notice here
    await new Promise((resolve) => setTimeout(resolve, 50));
    const late = [read('acc_1', closed), read('acc_1', now)] as const;
    store.release();
    const [closedLate, nowLate] = await Promise.all(late);
    expect(closedLate.events[0]!.actor).toBeNull();
    expect(nowLate.events[0]!.actor).toBeNull();
    expect((await inFlight).events[0]!.actor).toBe('jane@example.com'); // asked before: its own read
    expect(store.reads).toBe(4);
  });
});
