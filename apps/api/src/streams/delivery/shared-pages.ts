import type { EventFilters, EventTailRepository, TailWindow } from '@app/database';
import type { CommittedRead, CommittedSource } from '../../events/stream/committed-event-reader';

/** Snapshots remembered per group, for alignment: the latest few are all a caught-up reader can stand at. */
const REMEMBERED_SNAPSHOTS = 64;
/** Reads kept at most (in flight or settled), whatever their age. */
const MAX_READS = 256;
/**
 * Events of settled reads kept at most, whatever their age: about 30 MB of records, views and JSON
 * texts (pages are at most 2,000 events or about 2 MiB), which is some seconds of full ingest.
 */
const MAX_KEPT_EVENTS = 20_000;

/** One page read, shared by every reader of its group that asks for the same window while it is kept. */
interface SharedRead {
  read: Promise<CommittedRead & { limit: number }>;
  /** The account read. */
  accountId: string;
  /** How long it is kept from its start (in flight or settled). */
  keepMs: number;
  /** When it started (ms). */
  startedAt: number;
  /** Its events, once settled. */
  events: number;
}

/** The readers of one account with the same `q`. */
interface Group {
  /** The snapshot the latest read of "everything committed now" ended at, and the sequence number of its start. */
  frontier: { snapshot: string; startedSeq: number } | null;
  /** Snapshots such reads ended at → the sequence number of their completion (the latest REMEMBERED_SNAPSHOTS). */
  obtainedAt: Map<string, number>;
}

/**
 * One page read for the stream destinations of an account with the same `q` that stand at the same
 * position (docs/architecture.md, "Streams"). Each worker keeps its own CommittedEventReader, position,
 * batches, backoff and acknowledgements; only the read is shared: a worker asking for a window
 * (since, until, after) that another worker of its group started reading less than `keepMs` ago
 * gets that read's events, decoded once, and the limit it was read with (a page that came back full
 * is followed by the rest of its window, so a worker given a larger or smaller page than it asked for
 * reads on correctly). A worker that is behind, or waits out its backoff, simply asks for windows no
 * one else reads, and reads them itself: nobody waits for anybody.
 *
 * Caught-up workers poll every STREAM_POLL_MILLISECONDS, each from the snapshot its own last poll ended
 * at, so without help they would never stand at the same position. Alignment: a worker caught up at
 * snapshot S, while its group last read "everything committed now" up to F by a read that started
 * after the one that gave S completed (so every transaction committed in S is committed in F: both
 * from the same database, one taken after the other was returned), reads the window (S, F) instead of
 * (S, now), and then stands at F, where its group reads next. Windows tile (each transaction commits
 * between exactly one pair of consecutive snapshots), so nothing is read twice or skipped.
 *
 * Erasure (threat model P10): a read holds the values as they were when it ran. `erased(accountId)`,
 * called once an erasure of the account committed on this instance, drops the account's reads, in
 * flight or settled, so nobody who asks after the commit is given one; an erasure on another instance
 * is not told here, so no read is given to anyone `keepMs` after it started (docs/contract.md §17).
 */
export class SharedPages {
  private readonly reads = new Map<string, SharedRead>();
  /** The events of the settled reads kept. */
  private kept = 0;
  private readonly groups = new Map<string, Group>();
  /** Orders reads' starts and completions on this instance. */
  private seq = 0;

  /**
   * @param keepMs how long a read of a closed window (until given: the same events whoever asks) is kept for late readers
   * @param keepNowMs how long a read of everything committed now is: a reader given it is as far behind now as its
   *   age, and takes its empty page for "caught up" (its lag, `caughtUp`), so it serves only a group's next poll
   */
  constructor(
    private readonly events: Pick<EventTailRepository, 'committedBetween'>,
    private readonly keepMs: number,
    private readonly keepNowMs: number = keepMs,
  ) {}

  /** The page source of a reader of `accountId`'s events matching `q` (null: every event), its filters parsed from `q`. */
  source(accountId: string, q: string | null): CommittedSource {
    const groupKey = `${accountId}\u0000${q ?? ''}`;
    return {
      committedBetween: (_account: string, filters: EventFilters, window: TailWindow, limit: number) =>
        this.read(groupKey, accountId, filters, window, limit),
    };
  }

  /**
   * An erasure of `accountId`'s events committed: its reads, settled or in flight, are given to nobody
   * else (a read in flight still answers those who asked before; they asked before the commit).
   */
  erased(accountId: string): void {
    for (const [key, shared] of this.reads) if (shared.accountId === accountId) this.forget(key, shared);
  }

  /** How many reads are kept (for tests). */
  get size(): number {
    return this.reads.size;
  }

  private group(key: string): Group {
    let group = this.groups.get(key);
    if (!group) {
      group = { frontier: null, obtainedAt: new Map() };
      this.groups.set(key, group);
    }
    return group;
  }

  private async read(
    groupKey: string,
    accountId: string,
    filters: EventFilters,
    asked: TailWindow,
    limit: number,
  ): Promise<CommittedRead> {
    const group = this.group(groupKey);
    this.forgetOld(Date.now());
    // The very window asked for, if kept; else, for a caught-up reader behind its group, the window up to the group.
    let window = asked;
    let key = `${groupKey}\u0000${windowKey(asked)}`;
    let shared = this.reads.get(key);
    if (!shared) {
      window = this.aligned(group, asked);
      key = `${groupKey}\u0000${windowKey(window)}`;
      shared = this.reads.get(key) ?? this.start(group, key, accountId, filters, window, limit);
    }
    const page = await shared.read;
    return window === asked ? page : { ...page, aligned: true };
  }

  private start(
    group: Group,
    key: string,
    accountId: string,
    filters: EventFilters,
    window: TailWindow,
    limit: number,
  ): SharedRead {
    const startedSeq = ++this.seq;
    const shared: SharedRead = {
      accountId,
      keepMs: window.until === null ? this.keepNowMs : this.keepMs,
      startedAt: Date.now(),
      events: 0,
      read: this.events.committedBetween(accountId, filters, window, limit).then(
        (page) => {
          // Nothing committed since `since`: whoever asks next from there must read again, not be given this.
          if (window.until === null && page.until === window.since) this.forget(key, shared);
          else if (this.reads.get(key) === shared) {
            shared.events = page.events.length;
            this.kept += shared.events;
          }
          if (window.until === null) this.reached(group, page.until, startedSeq);
          return { ...page, limit };
        },
        (error: unknown) => {
          // A failed read is not shared with later askers: each tries again.
          if (this.reads.get(key) === shared) this.forget(key, shared);
          throw error;
        },
      ),
    };
    shared.read.catch(() => undefined); // the asker awaits it; nobody else must see it unhandled
    this.reads.set(key, shared);
    return shared;
  }

  /** A read of everything committed now ended at `snapshot`. */
  private reached(group: Group, snapshot: string, startedSeq: number): void {
    group.obtainedAt.delete(snapshot);
    group.obtainedAt.set(snapshot, ++this.seq);
    if (group.obtainedAt.size > REMEMBERED_SNAPSHOTS) group.obtainedAt.delete(group.obtainedAt.keys().next().value!);
    if (group.frontier === null || startedSeq > group.frontier.startedSeq) group.frontier = { snapshot, startedSeq };
  }

  /** The window to read for `asked`: (S, F) instead of (S, now) for a caught-up reader at S behind its group's F. */
  private aligned(group: Group, asked: TailWindow): TailWindow {
    if (asked.until !== null || asked.after !== null || group.frontier === null) return asked;
    const { snapshot, startedSeq } = group.frontier;
    const obtained = group.obtainedAt.get(asked.since);
    // S from another instance, or older than we remember: read on alone this once, and align at the next poll.
    if (snapshot === asked.since || obtained === undefined || startedSeq <= obtained) return asked;
    return { since: asked.since, until: snapshot, after: null };
  }

  /** Drops reads started too long ago (in flight or settled), and the oldest beyond MAX_READS or MAX_KEPT_EVENTS. */
  private forgetOld(now: number): void {
    for (const [key, shared] of this.reads) {
      if (now - shared.startedAt > shared.keepMs) this.forget(key, shared);
    }
    for (const [key, shared] of this.reads) {
      if (this.reads.size < MAX_READS && this.kept <= MAX_KEPT_EVENTS) break;
      this.forget(key, shared);
    }
  }

  private forget(key: string, shared: SharedRead): void {
    if (this.reads.get(key) === shared) this.reads.delete(key);
    this.kept -= shared.events;
    shared.events = 0;
  }
}

function windowKey({ since, until, after }: TailWindow): string {
  const from = after === null ? '' : `${after.time}|${after.chainId}|${after.position}`;
  return `${since}\u0000${until ?? ''}\u0000${from}`;
}
