import { randomUUID } from 'node:crypto';
import { unstorableReason } from '@app/hashing';
import { AsyncQueue } from '../async-queue';
import { AuditTrailError, FieldError } from '../errors';
import { Http } from '../http';
import { NewEvent, Receipt, receiptOf } from '../types';
import type { RecordedEvent } from '../schema-types/recorded-event';
import { DEFAULT_BACKOFF, retryDelay } from './backoff';
import { Backlog, QueuedEvent } from './backlog';
import { isTransient, refusedItems } from './batch-refusal';
import { ackLine, batchLine, eventLine, voidLine } from './spool-format';
import { Spool } from './spool';
import { Wakeup } from './wakeup';
import { ReceiptChecker, VerifyMany } from './receipt-checker';
import type { RecorderCounters, RecorderOptions, RejectedEvent } from './recorder-options';

export type { RecorderCounters, RecorderMetric, RecorderOptions, RejectedEvent } from './recorder-options';

const MAX_EVENT_BYTES = 64 * 1024;
/** `{"t":"e","n":<number>,"e":` and `}\n` around an event's text in the spool. */
const EVENT_LINE_OVERHEAD = 40;

/**
 * The application's hot path to the trail (docs/contract.md §20): record() hands an event over;
 * events are batched by count, bytes and linger time into POST /v1/events/batch, one batch in
 * flight at a time (so each chain keeps the order of record()), each with an Idempotency-Key kept
 * across retries and, in durable mode, across restarts. Queue → batcher → sender with backoff →
 * spool, after OpenTelemetry's batch processor, without its drop.
 */
export class Recorder {
  readonly counters: RecorderCounters = { sent: 0, retried: 0, rejected: 0, spilled: 0 };
  private spool: Spool | null = null;
  private backlog: Backlog;
  private nextSeq = 0;
  private inFlight: QueuedEvent[] | null = null;
  /** The batches a previous run left live in the spool: sent first, with their keys. */
  private recovered: { key: string; events: { seq: number; text: string }[] }[] = [];
  private readonly wakeup = new Wakeup();
  /** Events waiting for room in memory (`block`), in the order of record(). */
  private readonly waiting: {
    text: string;
    bytes: number;
    resolve: (seq: number) => void;
    reject: (e: unknown) => void;
  }[] = [];
  private readonly flushWaiters: { through: number; done: () => void }[] = [];
  private readonly receiptQueues = new Set<AsyncQueue<Receipt>>();
  private readonly rejections = new AsyncQueue<RejectedEvent>();
  private readonly stop = new AbortController();
  private closing = false;
  private readonly opened: Promise<void>;
  private readonly running: Promise<void>;
  private readonly settings: Required<
    Omit<RecorderOptions, 'spoolDir' | 'metrics' | 'checkReceipts' | 'fsync' | 'fsyncIntervalMs'>
  >;
  /** With checkReceipts: verifies a sample of the receipts in the background. */
  readonly checker: ReceiptChecker | null;

  constructor(
    private readonly http: Http,
    private readonly options: RecorderOptions = {},
    verify?: VerifyMany,
  ) {
    const whenFull = options.whenFull ?? (options.spoolDir ? 'spill' : 'block');
    if (whenFull === 'spill' && !options.spoolDir) throw new TypeError("whenFull: 'spill' needs a spoolDir");
    this.settings = {
      maxBatchEvents: Math.min(options.maxBatchEvents ?? 500, 1000),
      maxBatchBytes: Math.min(options.maxBatchBytes ?? 1024 * 1024, 7 * 1024 * 1024),
      lingerMs: options.lingerMs ?? 200,
      whenFull,
      maxQueueBytes: options.maxQueueBytes ?? 32 * 1024 * 1024,
      maxSpoolBytes: options.maxSpoolBytes ?? 256 * 1024 * 1024,
      backoff: options.backoff ?? DEFAULT_BACKOFF,
    };
    this.backlog = new Backlog(this.settings.maxQueueBytes, null);
    if (options.checkReceipts && !verify)
      throw new TypeError('checkReceipts needs a recorder made by client.recorder()');
    this.checker = options.checkReceipts && verify ? new ReceiptChecker(verify, options.checkReceipts) : null;
    this.opened = this.open();
    this.running = this.opened.then(() => this.run());
    // A spool that cannot be opened is reported by record(), flush() and ready(); nothing is left unhandled.
    this.running.catch(() => undefined);
  }

  /** Resolves once the spool is open and its leftovers queued; rejects when it cannot be (SpoolLockedError…). */
  ready(): Promise<void> {
    return this.opened;
  }

  /**
   * Resolves once the event is safe: fsynced to the spool in durable mode, queued in memory
   * otherwise (after waiting for room under `block`). Rejects with TypeError for an event that no
   * JSON can carry faithfully, SpoolFullError when the spool is at its bound, and after close().
   * With the file of `audit-trail-client types` in the program, an event whose action has an
   * enforced schema must have its types (RecordedEvent); any other event is a NewEvent.
   */
  async record<A extends string>(recorded: RecordedEvent<A>): Promise<void> {
    const event: NewEvent = recorded;
    if (this.closing) throw new Error('the recorder is closed');
    await this.opened;
    const text = JSON.stringify(event);
    const reason = unstorableReason(event);
    if (reason !== null) throw new TypeError(`the event cannot be stored faithfully: ${reason}`);
    const bytes = Buffer.byteLength(text);
    if (bytes > MAX_EVENT_BYTES)
      throw new TypeError(`the event is ${bytes} bytes of JSON, over the 64 KiB a body may be`);
    const seq = await this.admit(text, bytes);
    if (this.spool) await this.spool.append(eventLine(seq, text), seq);
  }

  /** Resolves once every event recorded so far is acknowledged or rejected. */
  async flush(): Promise<void> {
    await this.opened;
    const through = this.nextSeq - 1;
    if (this.settledBelow() > through) return Promise.resolve();
    return new Promise((done) => {
      this.flushWaiters.push({ through, done });
      this.wakeup.notify();
    });
  }

  /**
   * Stops taking events, sends what it holds for at most `timeoutMs` (default 30 s, e.g. on
   * SIGTERM), then stops. In durable mode what is left stays in the spool for the next start; in
   * memory it is lost, and `unsent` says how many.
   */
  async close(options: { timeoutMs?: number } = {}): Promise<{ unsent: number }> {
    this.closing = true;
    this.waiting.splice(0).forEach((w) => w.reject(new Error('the recorder is closed')));
    this.wakeup.notify();
    try {
      await this.opened;
    } catch {
      await this.checker?.close();
      return { unsent: 0 };
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((done) => (timer = setTimeout(done, options.timeoutMs ?? 30_000)));
    await Promise.race([this.flush(), deadline]);
    clearTimeout(timer);
    this.stop.abort();
    this.wakeup.notify();
    await this.running.catch(() => undefined);
    const unsent = this.nextSeq - this.settledBelow();
    await this.spool?.close();
    this.receiptQueues.forEach((q) => q.end());
    this.rejections.end();
    await this.checker?.close();
    return { unsent };
  }

  /** The receipts of acknowledged events, from the moment of the call, in acknowledgement order. */
  receipts(): AsyncIterableIterator<Receipt> {
    const queue: AsyncQueue<Receipt> = new AsyncQueue(() => this.receiptQueues.delete(queue));
    this.receiptQueues.add(queue);
    return queue;
  }

  /** The events the service refused (since the start; one reader), each with its error. */
  rejected(): AsyncIterableIterator<RejectedEvent> {
    return this.rejections;
  }

  private async open(): Promise<void> {
    if (!this.options.spoolDir) return;
    const { spool, recovered } = await Spool.open(
      {
        dir: this.options.spoolDir,
        maxBytes: this.settings.maxSpoolBytes,
        fsync: this.options.fsync,
        fsyncIntervalMs: this.options.fsyncIntervalMs,
      },
      () => this.settledBelow(),
    );
    this.spool = spool;
    this.backlog = new Backlog(this.settings.maxQueueBytes, spool);
    this.nextSeq = recovered.nextSeq;
    this.recovered = recovered.live;
    const now = Date.now();
    for (const e of recovered.unsent) this.backlog.push({ ...e, bytes: Buffer.byteLength(e.text), at: now });
  }

  /** Every event numbered below this is settled (acknowledged or rejected). */
  private settledBelow(): number {
    const waiting = [this.inFlight?.[0]?.seq, this.recovered[0]?.events[0]?.seq, this.backlog.firstSeq];
    return Math.min(this.nextSeq, ...waiting.filter((seq): seq is number => seq !== undefined && seq !== null));
  }

  /**
   * Numbers and queues an event: at once, or under `block` once memory has room for it and for
   * every event that waited before it (so that waiting keeps the order of record()).
   */
  private admit(text: string, bytes: number): Promise<number> {
    const blocked = this.settings.whenFull === 'block' && !this.backlog.fits(bytes);
    if (this.waiting.length === 0 && !blocked) return Promise.resolve(this.enqueue(text, bytes));
    return new Promise((resolve, reject) => this.waiting.push({ text, bytes, resolve, reject }));
  }

  /** The synchronous part of record(): the number, then memory or (spilling) the spool alone. */
  private enqueue(text: string, bytes: number): number {
    this.spool?.reserve(bytes + EVENT_LINE_OVERHEAD);
    const seq = this.nextSeq++;
    const spill = this.settings.whenFull === 'spill' && (this.backlog.spilling || !this.backlog.fits(bytes));
    if (spill) {
      this.backlog.pushSpilled(seq, this.spool!.currentSegment);
      this.counters.spilled++;
      this.options.metrics?.({ kind: 'spilled', events: 1 });
    } else this.backlog.push({ seq, text, bytes, at: Date.now() });
    this.wakeup.notify();
    return seq;
  }

  /** Admits waiting events, oldest first, while memory has room. */
  private admitWaiting(): void {
    while (this.waiting.length > 0 && this.backlog.fits(this.waiting[0]!.bytes)) {
      const { text, bytes, resolve, reject } = this.waiting.shift()!;
      try {
        resolve(this.enqueue(text, bytes));
      } catch (error) {
        reject(error);
      }
    }
  }

  private async run(): Promise<void> {
    // settledBelow() counts the batches still in `recovered`, and deliver() makes the one taken in flight at once.
    for (let live = this.recovered.shift(); live; live = this.recovered.shift()) {
      const queued = live.events.map((e) => ({ ...e, bytes: Buffer.byteLength(e.text), at: Date.now() }));
      if (!(await this.deliver(live.key, queued))) return;
    }
    for (;;) {
      const batch = await this.nextBatch();
      if (batch === null) return;
      const key = newKey();
      if (!(await this.deliver(key, batch, true))) return;
    }
  }

  /** The next batch: full, or its oldest event has lingered, or a flush or close asks; null once stopped. */
  private async nextBatch(): Promise<QueuedEvent[] | null> {
    const { maxBatchEvents, maxBatchBytes, lingerMs } = this.settings;
    while (!this.stop.signal.aborted) {
      if (this.backlog.length < maxBatchEvents) await this.backlog.readBack(maxBatchEvents - this.backlog.length);
      const oldest = this.backlog.oldestAt;
      if (oldest !== null) {
        const full = this.backlog.length >= maxBatchEvents || this.backlog.bytes >= maxBatchBytes;
        const hurry = this.flushWaiters.length > 0 || this.closing;
        const wait = oldest + lingerMs - Date.now();
        if (full || hurry || wait <= 0) {
          const batch = this.backlog.take(maxBatchEvents, maxBatchBytes);
          this.admitWaiting();
          return batch;
        }
        await this.wakeup.wait(wait, this.stop.signal);
      } else await this.wakeup.wait(this.backlog.spilled > 0 ? 10 : undefined, this.stop.signal);
    }
    return null;
  }

  /**
   * Sends one batch until it is acknowledged or refused, always with `key` for the same events;
   * a refusal naming some events takes them out and sends the rest under a new key. False when
   * stopped first (the batch stays live in the spool).
   */
  private async deliver(key: string, events: QueuedEvent[], fresh = false): Promise<boolean> {
    this.inFlight = events;
    if (fresh && this.spool)
      await this.spool.append(
        batchLine(
          key,
          events.map((e) => e.seq),
        ),
      );
    for (let attempt = 0; ; attempt++) {
      if (this.stop.signal.aborted) return false;
      const body = `{"events":[${events.map((e) => e.text).join(',')}]}`;
      const started = Date.now();
      try {
        const answer = await this.http.postText('/v1/events/batch', body, key, this.stop.signal);
        const replayed = answer.headers.get('idempotent-replayed') === 'true';
        const ms = Date.now() - started;
        this.options.metrics?.({ kind: 'sent', events: events.length, bytes: body.length, ms, replayed });
        await this.settle(events, this.spool ? ackLine(key) : null);
        this.counters.sent += events.length;
        for (const event of answer.body.data) {
          const receipt = receiptOf(event);
          this.receiptQueues.forEach((q) => q.push(receipt));
          this.checker?.offer(receipt);
        }
        return true;
      } catch (error) {
        if (this.stop.signal.aborted) return false;
        const failure = asClientError(error);
        if (isTransient(failure)) {
          await this.backOff(attempt, failure);
          continue;
        }
        const rest = await this.refuse(key, events, failure);
        if (rest.length === 0) return true;
        [key, events, attempt] = [newKey(), rest, -1];
        this.inFlight = events;
        if (this.spool)
          await this.spool.append(
            batchLine(
              key,
              events.map((e) => e.seq),
            ),
          );
      }
    }
  }

  private async backOff(attempt: number, failure: AuditTrailError): Promise<void> {
    const delayMs = retryDelay(attempt, failure.retryAfter, this.settings.backoff);
    this.counters.retried++;
    this.options.metrics?.({
      kind: 'retried',
      attempt: attempt + 1,
      delayMs,
      status: failure.status,
      code: failure.code,
    });
    // A close does not cut the wait short: it ends it, leaving the batch for the next start.
    await this.wakeupAfter(delayMs);
  }

  /** Resolves after `ms`, or at once when the recorder stops. */
  private wakeupAfter(ms: number): Promise<void> {
    return new Promise((done) => {
      const stopped = () => {
        clearTimeout(timer);
        done();
      };
      const timer = setTimeout(() => {
        this.stop.signal.removeEventListener('abort', stopped);
        done();
      }, ms);
      this.stop.signal.addEventListener('abort', stopped, { once: true });
    });
  }

  /** Reports the refused events, records the refusal, and returns the events to send again. */
  private async refuse(key: string, events: QueuedEvent[], error: AuditTrailError): Promise<QueuedEvent[]> {
    const named = refusedItems(error, events.length);
    const refused = named ?? new Map(events.map((_, i) => [i, [] as FieldError[]]));
    const rest = events.filter((_, i) => !refused.has(i));
    const out = events.filter((_, i) => refused.has(i));
    for (const [i, fields] of refused) {
      this.rejections.push({ event: JSON.parse(events[i]!.text) as NewEvent, error, fields });
    }
    this.counters.rejected += out.length;
    this.options.metrics?.({ kind: 'rejected', events: out.length, status: error.status, code: error.code });
    const why = { status: error.status, code: error.code, message: error.message };
    const line = this.spool
      ? voidLine(
          key,
          out.map((e) => e.seq),
          why,
        )
      : null;
    if (rest.length === 0) await this.settle(out, line);
    else if (line) await this.spool!.append(line);
    return rest;
  }

  /** Marks a batch's events settled: the spool line first, then flushes, then the files no longer needed. */
  private async settle(events: QueuedEvent[], line: string | null): Promise<void> {
    if (line && this.spool) await this.spool.append(line);
    if (this.inFlight === events) this.inFlight = null;
    const below = this.settledBelow();
    for (const waiter of this.flushWaiters.splice(0)) {
      if (waiter.through < below) waiter.done();
      else this.flushWaiters.push(waiter);
    }
    await this.spool?.prune();
  }
}

function newKey(): string {
  return `rec_${randomUUID()}`;
}

function asClientError(error: unknown): AuditTrailError {
  if (error instanceof AuditTrailError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new AuditTrailError(0, 'NETWORK_ERROR', message, {}, null, null, { cause: error });
}
