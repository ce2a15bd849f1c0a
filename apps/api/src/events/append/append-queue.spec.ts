import { AppConfig, AppError, Metrics } from '@app/common';
import { DatabaseLocator, EventRecord } from '@app/database';
import { AppendQueue, appendRequestBytes } from './append-queue';
import { AppendRequest, StaleSchemas } from './append-request';
import { AppendUnit, IdempotentLedger, Replay, Settled, Written } from './idempotent-ledger';

/**
 * The queue's own rules, with the ledger (the database transaction, covered by the e2e suites)
 * replaced by one that records each batch and settles when the test says so.
 */
class RecordingLedger {
  /** The events of each transaction, in order. */
  batches: AppendRequest[][] = [];
  private pending: { requests: AppendRequest[]; settle: (error?: Error) => void }[] = [];
  failWith: ((requests: AppendRequest[]) => Error | null) | null = null;

  /** What a request gets instead of its events, by its first event's actor (a replayed Idempotency-Key, a 409). */
  refusals = new Map<string, Replay | AppError>();

  append(units: AppendUnit[]): Promise<Settled[]> {
    const requests = units.flatMap((u) => u.events);
    this.batches.push(requests);
    return new Promise((resolve, reject) => {
      this.pending.push({
        requests,
        settle: (error) =>
          error
            ? reject(error)
            : resolve(
                units.map(
                  (u): Settled =>
                    this.refusals.get(u.events[0]!.actor) ?? {
                      events: u.events.map((r) => ({ actor: r.actor, chainName: r.chainName }) as EventRecord),
                      answer: null,
                    },
                ),
              ),
      });
      const failure = this.failWith?.(requests);
      if (failure) this.pending.pop()!.settle(failure);
    });
  }

  /** Commits every transaction in flight. */
  commitAll(): void {
    const pending = this.pending;
    this.pending = [];
    pending.forEach((p) => p.settle());
  }
}

const tick = () => new Promise((resolve) => setImmediate(resolve));
const request = (chainName: string, actor: string): AppendRequest => ({
  accountId: 'acc_1',
  chainName,
  actor,
  action: 'a',
  resource: null,
  context: null,
});

/** The events of an outcome that is not a replay. */
const eventsOf = (outcome: Written | Replay): EventRecord[] => {
  if (outcome instanceof Replay) throw new Error(`replayed ${outcome.json}`);
  return outcome.events;
};
/** A request of these events (a batch), as EventsService hands it to the queue. */
const appendAll = (sut: AppendQueue, events: AppendRequest[]) => sut.append({ events, idempotency: null });
/** One event through the queue, as EventsService hands a single append to it. */
const one = async (sut: AppendQueue, request: AppendRequest) => eventsOf(await appendAll(sut, [request]))[0]!;

function queueWith(overrides: Partial<AppConfig> = {}) {
  const ledger = new RecordingLedger();
  const config = Object.assign(new AppConfig(), overrides);
  const database = { settings: { url: 'postgres://x', poolSize: 10 } } as DatabaseLocator;
  return { ledger, sut: new AppendQueue(ledger as unknown as IdempotentLedger, config, database, new Metrics()) };
}

describe('AppendQueue', () => {
  it('writes what arrives while a chain is being written in its next transaction, in arrival order', async () => {
    const { ledger, sut } = queueWith();
    const first = one(sut, request('hot', 'a0'));
    const rest = [1, 2, 3, 4].map((i) => one(sut, request('hot', `a${i}`)));
    await tick();
    expect(ledger.batches.map((b) => b.map((r) => r.actor))).toEqual([['a0']]);
    ledger.commitAll();
    await first;
    await tick();
    expect(ledger.batches.map((b) => b.map((r) => r.actor))).toEqual([['a0'], ['a1', 'a2', 'a3', 'a4']]);
    ledger.commitAll();
    expect((await Promise.all(rest)).map((r) => r.actor)).toEqual(['a1', 'a2', 'a3', 'a4']);
  });

  it('settles a request only when its transaction commits', async () => {
    const { ledger, sut } = queueWith();
    let settled = false;
    const appended = one(sut, request('c', 'x')).then(() => (settled = true));
    await tick();
    expect(settled).toBe(false);
    ledger.commitAll();
    await appended;
    expect(settled).toBe(true);
  });

  it('runs transactions of other chains alongside, up to APPEND_CONCURRENCY, never two on one chain', async () => {
    const { ledger, sut } = queueWith({ appendConcurrency: 2 });
    const all = ['x', 'y', 'z', 'x', 'y'].map((chain, i) => one(sut, request(chain, `${chain}${i}`)));
    await tick();
    // Two transactions in flight (x0, y1); z2 waits for a free slot, x3 and y4 for their chains.
    expect(ledger.batches.map((b) => b.map((r) => r.actor))).toEqual([['x0'], ['y1']]);
    ledger.commitAll();
    await tick();
    const next = ledger.batches.slice(2);
    expect(next).toHaveLength(2);
    expect(
      next
        .flat()
        .map((r) => r.actor)
        .sort(),
    ).toEqual(['x3', 'y4', 'z2']);
    next.forEach((b) => expect(new Set(b.map((r) => r.chainName)).size).toBe(b.length));
    ledger.commitAll();
    await Promise.all(all);
  });

  it('caps a transaction at APPEND_BATCH_SIZE events', async () => {
    const { ledger, sut } = queueWith({ appendBatchSize: 3, appendConcurrency: 1 });
    one(sut, request('c', 'first')).catch(() => undefined);
    const later = Array.from({ length: 7 }, (_, i) => one(sut, request(`c${i}`, `e${i}`)));
    await tick();
    ledger.commitAll();
    for (let i = 0; i < 4; i++) {
      await tick();
      ledger.commitAll();
    }
    await Promise.all(later);
    expect(ledger.batches.map((b) => b.length)).toEqual([1, 3, 3, 1]);
  });

  it('answers 503 with Retry-After when APPEND_QUEUE_LIMIT events are already waiting', async () => {
    const { ledger, sut } = queueWith({ appendQueueLimit: 2, appendConcurrency: 1 });
    const accepted = [one(sut, request('c', '1')), one(sut, request('c', '2')), one(sut, request('c', '3'))];
    const refused = one(sut, request('c', '4'));
    await expect(refused).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', headers: { 'Retry-After': '1' } });
    await expect(refused).rejects.toBeInstanceOf(AppError);
    for (let i = 0; i < 3; i++) {
      await tick();
      ledger.commitAll();
    }
    await Promise.all(accepted);
  });

  it('answers 503 with Retry-After when APPEND_QUEUE_LIMIT_BYTES are already waiting, whatever the count', async () => {
    const big = (actor: string): AppendRequest => ({ ...request('c', actor), context: { blob: 'é'.repeat(1000) } });
    const weight = appendRequestBytes(big('1'));
    expect(weight).toBeGreaterThan(2000); // 'é' is two bytes in UTF-8
    const { ledger, sut } = queueWith({ appendQueueLimitBytes: 2 * weight + 100, appendConcurrency: 1 });
    // The first goes straight into a transaction; two more fill the bytes while it runs.
    const accepted = [one(sut, big('1')), one(sut, big('2')), one(sut, big('3'))];
    const refused = one(sut, big('4'));
    await expect(refused).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', headers: { 'Retry-After': '1' } });
    await expect(refused).rejects.toBeInstanceOf(AppError);
    // A small event still fits in what is left; once the transactions commit, big ones fit again.
    const small = one(sut, request('c', 'small'));
    for (let i = 0; i < 3; i++) {
      await tick();
      ledger.commitAll();
    }
    await Promise.all([...accepted, small]);
    const later = one(sut, big('5'));
    await tick();
    ledger.commitAll();
    await expect(later).resolves.toMatchObject({ actor: '5' });
  });

  it('fails only the event the database refuses; its batch neighbours are written one by one', async () => {
    const { ledger, sut } = queueWith({ appendConcurrency: 1 });
    const refusal = Object.assign(new Error('invalid input syntax'), { code: '22P02' });
    ledger.failWith = (requests) => (requests.some((r) => r.actor === 'poison') ? refusal : null);
    const blocker = one(sut, request('c', 'blocker'));
    const settled = Promise.allSettled(['ok1', 'poison', 'ok2'].map((actor) => one(sut, request('c', actor))));
    await tick();
    ledger.commitAll();
    await blocker;
    for (let i = 0; i < 6; i++) {
      await tick();
      ledger.commitAll();
    }
    const results = await settled;
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(ledger.batches.map((b) => b.map((r) => r.actor))).toEqual([
      ['blocker'],
      ['ok1', 'poison', 'ok2'],
      ['ok1'],
      ['poison'],
      ['ok2'],
    ]);
    expect((results[1] as PromiseRejectedResult).reason).toBe(refusal);
  });

  it('a stale schema generation (StaleSchemas) fails only its account’s units; the others are written at once', async () => {
    const { ledger, sut } = queueWith({ appendConcurrency: 1 });
    const stale = new StaleSchemas(new Set(['acc_stale']));
    ledger.failWith = (requests) => (requests.some((r) => r.accountId === 'acc_stale') ? stale : null);
    const blocker = one(sut, request('c', 'blocker'));
    const other = { ...request('c', 'other'), accountId: 'acc_stale' };
    // A batch (one unit) with an event of the stale account fails as a whole.
    const mixed = [request('e', 'mixed1'), { ...request('e', 'mixed2'), accountId: 'acc_stale' }];
    const settled = Promise.allSettled([
      one(sut, request('c', 'ok1')),
      one(sut, other),
      one(sut, request('d', 'ok2')),
      appendAll(sut, mixed),
    ]);
    await tick();
    ledger.commitAll();
    await blocker;
    for (let i = 0; i < 4; i++) {
      await tick();
      ledger.commitAll();
    }
    const results = await settled;
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    expect((results[1] as PromiseRejectedResult).reason).toBe(stale);
    expect((results[3] as PromiseRejectedResult).reason).toBe(stale);
    expect(ledger.batches.map((b) => b.map((r) => r.actor))).toEqual([
      ['blocker'],
      ['ok1', 'other', 'ok2', 'mixed1', 'mixed2'],
      ['ok1', 'ok2'],
    ]);
  });

  it('fails the requests of a batch the database could not take, and recovers for the next', async () => {
    const { ledger, sut } = queueWith({ appendConcurrency: 1 });
    ledger.failWith = () => Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const results = await Promise.allSettled([one(sut, request('c', 'a')), one(sut, request('c', 'b'))]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    ledger.failWith = null;
    const later = one(sut, request('c', 'c'));
    await tick();
    ledger.commitAll();
    await expect(later).resolves.toMatchObject({ chainName: 'c' });
  });

  describe('a batch (appendAll)', () => {
    const actors = (ledger: RecordingLedger) => ledger.batches.map((b) => b.map((r) => r.actor));

    it('goes in one transaction with what else waits, and fails as a whole when the database refuses one of its events', async () => {
      const { ledger, sut } = queueWith({ appendConcurrency: 1 });
      const refusal = Object.assign(new Error('check violation'), { code: '23514' });
      ledger.failWith = (requests) => (requests.some((r) => r.actor === 'poison') ? refusal : null);
      const blocker = one(sut, request('x', 'blocker'));
      const before = one(sut, request('a', 's1'));
      const refused = appendAll(sut, [request('b', 'b1'), request('c', 'poison'), request('b', 'b2')]);
      const good = appendAll(sut, [request('d', 'd1'), request('a', 'd2')]);
      const settled = Promise.allSettled([before, refused, good]);
      await tick();
      ledger.commitAll();
      await blocker;
      for (let i = 0; i < 6; i++) {
        await tick();
        ledger.commitAll();
      }
      const [s1, bad, ok] = await settled;
      expect([s1.status, bad.status, ok.status]).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((bad as PromiseRejectedResult).reason).toBe(refusal);
      expect(eventsOf((ok as PromiseFulfilledResult<Written | Replay>).value).map((a) => a.actor)).toEqual([
        'd1',
        'd2',
      ]);
      expect(actors(ledger)).toEqual([
        ['blocker'],
        ['s1', 'b1', 'poison', 'b2', 'd1', 'd2'],
        ['s1'],
        ['b1', 'poison', 'b2'],
        ['d1', 'd2'],
      ]);
    });

    it('holds back later requests of its chains while one of its chains is busy (arrival order per chain)', async () => {
      const { ledger, sut } = queueWith({ appendConcurrency: 2 });
      const busy = one(sut, request('a', 'a1'));
      await tick();
      const both = appendAll(sut, [request('a', 'a2'), request('b', 'b1')]);
      const laterB = one(sut, request('b', 'b2'));
      const other = one(sut, request('c', 'c1'));
      await tick();
      // b2 must not overtake b1, which waits for chain a; c1 is free.
      expect(actors(ledger)).toEqual([['a1'], ['c1']]);
      ledger.commitAll();
      await Promise.all([busy, other]);
      await tick();
      expect(actors(ledger).slice(2)).toEqual([['a2', 'b1', 'b2']]);
      ledger.commitAll();
      expect(eventsOf(await both).map((a) => a.actor)).toEqual(['a2', 'b1']);
      expect((await laterB).actor).toBe('b2');
    });

    it('goes alone when larger than APPEND_BATCH_SIZE, never split', async () => {
      const { ledger, sut } = queueWith({ appendBatchSize: 2, appendConcurrency: 1 });
      const blocker = one(sut, request('x', 'blocker'));
      const big = appendAll(
        sut,
        ['1', '2', '3'].map((i) => request(`c${i}`, i)),
      );
      const after = one(sut, request('y', 'after'));
      for (let i = 0; i < 3; i++) {
        await tick();
        ledger.commitAll();
      }
      await Promise.all([blocker, big, after]);
      expect(actors(ledger)).toEqual([['blocker'], ['1', '2', '3'], ['after']]);
    });

    it('counts its events against APPEND_QUEUE_LIMIT: 503 when they do not all fit, nothing queued', async () => {
      const { ledger, sut } = queueWith({ appendQueueLimit: 3, appendConcurrency: 1 });
      const blocker = one(sut, request('x', 'blocker'));
      const waiting = one(sut, request('c', 'w'));
      const refused = appendAll(
        sut,
        ['1', '2', '3'].map((i) => request('c', i)),
      );
      await expect(refused).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE', headers: { 'Retry-After': '1' } });
      const fits = appendAll(
        sut,
        ['1', '2'].map((i) => request('c', i)),
      );
      for (let i = 0; i < 3; i++) {
        await tick();
        ledger.commitAll();
      }
      await Promise.all([blocker, waiting, fits]);
      expect(actors(ledger)).toEqual([['blocker'], ['w', '1', '2']]);
    });
  });
});

describe('AppendQueue: what a request’s Idempotency-Key gets instead of its events', () => {
  it('resolves that request (a batch as a whole) to the replay, rejects one refused with 409, and its neighbours in the transaction get their events', async () => {
    const { ledger, sut } = queueWith({ appendConcurrency: 1 });
    ledger.refusals.set('replayed', new Replay('{"data":"first"}'));
    const inProgress = new AppError('IDEMPOTENCY_IN_PROGRESS', 'in flight elsewhere');
    ledger.refusals.set('held', inProgress);
    const blocker = one(sut, request('x', 'blocker'));
    const batch = appendAll(sut, [request('a', 'replayed'), request('b', 'replayed')]);
    const held = one(sut, request('d', 'held'));
    const neighbour = one(sut, request('c', 'fresh'));
    await tick();
    ledger.commitAll();
    await blocker;
    await tick();
    expect(ledger.batches.map((b) => b.map((r) => r.actor))).toEqual([
      ['blocker'],
      ['replayed', 'replayed', 'held', 'fresh'],
    ]);
    ledger.commitAll();
    expect(await batch).toEqual(new Replay('{"data":"first"}'));
    await expect(held).rejects.toBe(inProgress);
    expect((await neighbour).actor).toBe('fresh');
  });
});
