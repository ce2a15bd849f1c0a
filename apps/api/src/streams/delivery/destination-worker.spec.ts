import { Logger } from '@nestjs/common';
import { AppConfig, Metrics } from '@app/common';
import type { DestinationRow, DestinationsRepository, EventRecord, EventTailRepository } from '@app/database';
import { SecretBox } from '../secret-box';
import type { Delivery, Sink, SinkBatch } from '../sinks';
import { ranges, type DeliveryAudit } from './delivery-audit';
import { retryDelay } from './backoff';
import { batchId, DestinationWorker, WorkerDeps } from './destination-worker';
import { SharedPages } from './shared-pages';

const box = new SecretBox(Buffer.alloc(32, 7));

function event(n: number, chain = 'chn_a'): EventRecord {
  return {
    id: `evt_${String(n).padStart(4, '0')}`,
    accountId: 'acc_1',
    chainId: chain,
    chainName: chain,
    position: n,
    actor: 'alice',
    action: 'doc.update',
    resource: null,
    context: null,
    timestamp: new Date(1_700_000_000_000 + n),
    previousHash: '0'.repeat(64),
    hash: '1'.repeat(64),
    saltSeed: null,
    erasure: null,
    schema: null,
  };
}

/**
 * A worker over fakes: `committed` events are read once by each worker (then nothing), the sink
 * answers from `answers` (then ok), and the repository records what the worker stored, the
 * backoff included (as the row does: a later worker reads what is left of it).
 */
function harness(
  committed: EventRecord[],
  answers: (Delivery | Promise<Delivery>)[],
  row: Partial<DestinationRow> = {},
) {
  const destination = {
    id: 'dst_1',
    accountId: 'acc_1',
    kind: 'webhook',
    url: 'https://example.test/hook',
    format: 'native',
    q: null,
    batchSize: 3,
    timeoutSeconds: 1,
    options: {},
    secrets: box.seal('dst_1', { webhookSecrets: [{ secret: 'whsec_x', until: null }], headers: {} }),
    state: 'active',
    version: 4,
    position: { since: '10:10:', until: null, after: null },
    consecutiveFailures: 0,
    caughtUp: false,
    ...row,
  } as DestinationRow;
  let retryAt = 0;
  let served = false;
  const events = {
    committedBetween: (_a: string, _f: unknown, _w: unknown, limit: number) => {
      const page = served ? [] : committed.slice(0, limit);
      served = true;
      return Promise.resolve({ until: '20:20:', events: page });
    },
  } as unknown as EventTailRepository;
  const acks: { events: number; after: unknown }[] = [];
  let leaseHeld = true;
  const destinations = {
    findForDelivery: () => {
      served = false; // a new worker reads from the stored position again
      return Promise.resolve({ ...destination, backoffMs: Math.max(0, retryAt - Date.now()) });
    },
    acknowledged: (_id: string, _o: string, _v: number, ack: { events: number; position: { after: unknown } }) => {
      if (leaseHeld) {
        acks.push({ events: ack.events, after: ack.position.after });
        destination.consecutiveFailures = 0;
        retryAt = 0;
      }
      return Promise.resolve(leaseHeld);
    },
    caughtUp: () => Promise.resolve(leaseHeld),
  } as unknown as DestinationsRepository;
  const failures: string[] = [];
  const waits: number[] = [];
  const audit = {
    failed: (
      _r: DestinationRow,
      _o: string,
      _v: number,
      _e: unknown,
      outcome: { action: string; retryInMs: number },
    ) => {
      failures.push(outcome.action);
      waits.push(outcome.retryInMs);
      destination.consecutiveFailures += 1;
      retryAt = Date.now() + outcome.retryInMs;
      const { action } = outcome;
      return Promise.resolve(action === 'retry' ? 'retrying' : action === 'pause' ? 'paused' : 'disabled');
    },
  } as unknown as DeliveryAudit;
  const sent: SinkBatch[] = [];
  const sink: Sink = {
    deliver: (batch) => {
      sent.push(batch);
      return Promise.resolve(answers.shift() ?? { ok: true });
    },
    close: () => Promise.resolve(),
  };
  const deps: WorkerDeps = {
    owner: 'ins_1',
    hostname: 'host',
    destinations,
    // Nothing kept: each worker reads its own pages, as the fake above serves them.
    pages: new SharedPages(events, -1),
    secrets: box,
    audit,
    config: Object.assign(new AppConfig(), { streamPollMilliseconds: 5 }),
    metrics: new Metrics(),
    logger: new Logger('test'),
    openSink: () => sink,
  };
  return {
    start: () => new DestinationWorker(deps, 'dst_1', 4),
    sent,
    acks,
    failures,
    waits,
    loseLease: () => (leaseHeld = false),
  };
}

const until = async (check: () => boolean) => {
  for (let i = 0; i < 500 && !check(); i++) await new Promise((r) => setTimeout(r, 2));
  expect(check()).toBe(true);
};

describe('DestinationWorker', () => {
  it('sends batches of batchSize in order and stores the position after each acknowledged one', async () => {
    const h = harness(
      [1, 2, 3, 4, 5, 6, 7].map((n) => event(n)),
      [],
    );
    const worker = h.start();
    await until(() => h.acks.length === 3);
    await worker.end();
    expect(h.sent.map((b) => b.events.map((e) => e.chain.position))).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
    expect(h.acks.map((a) => a.events)).toEqual([3, 3, 1]);
    expect(h.acks[2]!.after).toMatchObject({ chainId: 'chn_a', position: 7 });
  });

  it('retries a refused batch with the same events and id, and sends the next only after it', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    try {
      const refused: Delivery = { ok: false, status: 503, message: 'HTTP 503', action: 'retry', retryAfterMs: 1000 };
      const h = harness(
        [1, 2, 3, 4].map((n) => event(n)),
        [refused, refused],
      );
      const worker = h.start();
      for (let i = 0; i < 50 && h.acks.length < 2; i++) {
        await jest.advanceTimersByTimeAsync(1_000);
      }
      await worker.end();
      expect(h.failures).toEqual(['retry', 'retry']);
      expect(h.sent.map((b) => b.id)).toEqual([h.sent[0]!.id, h.sent[0]!.id, h.sent[0]!.id, h.sent[3]!.id]);
      expect(h.sent[0]!.id).toBe(batchId('dst_1', h.sent[0]!.events));
      expect(h.sent.slice(0, 3).every((b) => b.events.map((e) => e.id).join() === 'evt_0001,evt_0002,evt_0003')).toBe(
        true,
      );
      expect(h.acks.map((a) => a.events)).toEqual([3, 1]);
    } finally {
      jest.useRealTimers();
    }
  });

  it('stops at a refusal that disables or pauses the destination, storing nothing past it', async () => {
    const gone: Delivery = { ok: false, status: 410, message: 'HTTP 410', action: 'disable', retryAfterMs: null };
    const h = harness(
      [1, 2, 3, 4].map((n) => event(n)),
      [gone],
    );
    const worker = h.start();
    await worker.done;
    expect(worker.ended || h.sent.length === 1).toBe(true);
    expect(h.sent).toHaveLength(1);
    expect(h.acks).toHaveLength(0);
    expect(h.failures).toEqual(['disable']);
  });

  it('ends once its lease or version is gone (the acknowledgement is refused), one batch later at most', async () => {
    const h = harness(
      [1, 2, 3, 4, 5, 6, 7, 8, 9].map((n) => event(n)),
      [],
    );
    h.loseLease();
    const worker = h.start();
    await worker.done;
    // The second batch was sent while the first one's position was being written, and nothing after it.
    expect(h.sent).toHaveLength(2);
    expect(h.acks).toHaveLength(0);
  });
});

describe('DestinationWorker and the backoff (docs/contract.md §16 "Failures")', () => {
  const refused: Delivery = { ok: false, status: 400, message: 'HTTP 400', action: 'retry', retryAfterMs: null };
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] }));
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('a new worker (a replay, resume, change or pause moved the version on) first waits what is left of the backoff', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(0.999);
    const h = harness(
      [event(1)],
      Array.from({ length: 50 }, () => refused),
    );
    let worker = h.start();
    await jest.advanceTimersByTimeAsync(0);
    expect(h.sent).toHaveLength(1);
    // Ten replays 0.3 s apart, each ending the worker and starting another (the attack of issue 37, item 5).
    for (let i = 0; i < 10; i++) {
      await jest.advanceTimersByTimeAsync(300);
      await worker.end();
      worker = h.start();
    }
    await jest.advanceTimersByTimeAsync(0);
    // The first retry was due ~2 s after the failure: the new workers sent it once, when it was due.
    expect(h.sent).toHaveLength(2);
    expect(h.waits[0]).toBeGreaterThan(1_900);
    await worker.end();
  });

  it('the backoff grows from the stored failure count, not from attempt 1 again', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    const h = harness([event(1)], [refused], { consecutiveFailures: 8 });
    const worker = h.start();
    await jest.advanceTimersByTimeAsync(0);
    await worker.end();
    expect(h.failures).toEqual(['retry']);
    expect(h.waits).toEqual([retryDelay(9, null, () => 0.5)]);
    expect(h.waits[0]).toBeGreaterThan(100_000);
  });

  it('a worker started while a backoff runs sends nothing until it has passed, then retries', async () => {
    jest.spyOn(Math, 'random').mockReturnValue(0.5);
    const h = harness([event(1)], [refused]);
    let worker = h.start();
    await jest.advanceTimersByTimeAsync(0);
    await worker.end();
    expect(h.waits).toEqual([1_500]);
    worker = h.start();
    await jest.advanceTimersByTimeAsync(1_400);
    expect(h.sent).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(200);
    expect(h.sent).toHaveLength(2);
    expect(h.acks.map((a) => a.events)).toEqual([1]);
    await worker.end();
  });

  it('retire() (a change) lets the attempt in flight finish and records its failure and backoff, then sends nothing more', async () => {
    jest.useRealTimers();
    let answer: (delivery: Delivery) => void = () => undefined;
    const h = harness([event(1)], [new Promise<Delivery>((resolve) => (answer = resolve))]);
    const worker = h.start();
    await until(() => h.sent.length === 1);
    const retired = worker.retire();
    answer(refused);
    await retired;
    expect(worker.ended).toBe(false);
    expect(h.failures).toEqual(['retry']);
    expect(h.waits).toHaveLength(1);
    expect(h.sent).toHaveLength(1);
  });
});

describe('ranges', () => {
  it('writes ascending positions as inclusive ranges', () => {
    expect(ranges([1, 2, 3, 7, 9, 10])).toEqual([
      [1, 3],
      [7, 7],
      [9, 10],
    ]);
    expect(ranges([])).toEqual([]);
  });
});
