import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AuditTrailClient, RecorderMetric, RejectedEvent } from '@audit-trail/client';
import { checkExactlyOnce, clientOf, listening, StoredEvent } from './support/client-app';
import { KEYS, startTestApp, TestApp } from './support/test-app';

/*
 * docs/contract.md §20, the recorder against the real service: exactly once and in each chain's order
 * from concurrent producers (issue 38's 100,000 events from 8 producers through one durable
 * recorder, checked in SQL; 5,000 from 4 in memory), a refused event
 * reported while the rest of its batch is stored, 503 + Retry-After honoured, and the
 * application killed mid-stream then restarted on its spool.
 */
describe('the client’s recorder (docs/contract.md §20)', () => {
  let t: TestApp;
  let client: AuditTrailClient;
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'client-recorder-'));
    dirs.push(dir);
    return dir;
  };

  beforeAll(async () => {
    t = await startTestApp();
    client = clientOf(await listening(t));
  });
  afterAll(async () => {
    await t?.close();
    dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true }));
  });

  /** Every stored event of a test (action `client.<prefix>`), through the client's own paging. */
  async function stored(prefix: string): Promise<StoredEvent[]> {
    const events: StoredEvent[] = [];
    for await (const e of client.events.list({ action: `client.${prefix}`, limit: 200 })) events.push(e);
    return events;
  }

  const event = (prefix: string, producer: number, n: number) => ({
    actor: `producer-${producer}`,
    action: `client.${prefix}`,
    chain: `${prefix}-${producer}`,
    context: { producer, n },
  });

  /**
   * What a run stored, checked in SQL (not 100,000 reads over HTTP): per producer, how many events,
   * how many distinct numbers, the lowest and highest, and on how many chains; over all chains, the
   * steps between consecutive positions whose number is not the previous one's plus one.
   */
  async function storedInSql(prefix: string) {
    const perProducer = await t.dataSource.query<
      { producer: number; events: number; distinct: number; first: number; last: number; chains: number }[]
    >(
      `SELECT (context->>'producer')::int AS producer, count(*)::int AS events,
              count(DISTINCT context->>'n')::int AS distinct, min((context->>'n')::int) AS first,
              max((context->>'n')::int) AS last, count(DISTINCT chain_id)::int AS chains
         FROM events WHERE action = $1 GROUP BY 1 ORDER BY 1`,
      [`client.${prefix}`],
    );
    const [{ broken }] = await t.dataSource.query<[{ broken: number }]>(
      `SELECT count(*)::int AS broken FROM (
         SELECT (context->>'n')::int - lag((context->>'n')::int) OVER (PARTITION BY chain_id ORDER BY position) AS step
           FROM events WHERE action = $1) steps
        WHERE step <> 1`,
      [`client.${prefix}`],
    );
    return { perProducer, broken };
  }

  it.each([
    { mode: 'in memory', durable: false, producers: 4, each: 1250 },
    { mode: 'durable', durable: true, producers: 8, each: 12_500 },
  ])(
    'stores the events of concurrent producers exactly once, each chain in order ($mode: $producers producers × $each)',
    async ({ durable, producers, each }) => {
      const prefix = durable ? 'durable' : 'memory';
      // Batches of 1,000 (the most the service takes): the run is bound by the service's batch appends.
      const recorder = client.recorder({
        spoolDir: durable ? tempDir() : undefined,
        lingerMs: 20,
        maxBatchEvents: 1000,
      });
      const receipts = new Set<string>();
      const reading = (async () => {
        for await (const r of recorder.receipts()) receipts.add(r.id);
      })();
      const started = Date.now();
      await Promise.all(
        Array.from({ length: producers }, async (_, producer) => {
          // Each producer hands over 25 events at a time (as concurrent requests of one application
          // would), in order: record() numbers events in the order it is called.
          for (let n = 0; n < each; n += 25) {
            await Promise.all(Array.from({ length: 25 }, (_, i) => recorder.record(event(prefix, producer, n + i))));
          }
        }),
      );
      await recorder.flush();
      const ms = Date.now() - started;
      await recorder.close();
      await reading;
      const total = producers * each;
      const checked = Date.now();
      expect(await storedInSql(prefix)).toEqual({
        perProducer: Array.from({ length: producers }, (_, producer) => ({
          producer,
          events: each,
          distinct: each,
          first: 0,
          last: each - 1,
          chains: 1,
        })),
        broken: 0,
      });
      expect(receipts.size).toBe(total);
      expect(recorder.counters).toMatchObject({ sent: total, rejected: 0 });
      console.log(
        `recorder (${prefix}): ${total} events from ${producers} producers in ${ms} ms (${Math.round((total * 1000) / ms)} events/s); checked in SQL in ${Date.now() - checked} ms`,
      );
    },
    // A bound on a hang, not a speed target (the bench's `client` scenario is that): 34 s embedded on a quiet
    // machine, 268 s once beside a second jest worker and three other test runs on the same two cores.
    600_000,
  );

  it('keeps up with raw batches of the same size sent in the same run (issue 38 asks ≥ 0.9× on the bench machine)', async () => {
    const events = (prefix: string) =>
      [0, 1, 2, 3].flatMap((p) => Array.from({ length: 1250 }, (_, n) => event(prefix, p, n)));
    await client.events.appendBatch(events('warm').slice(0, 500)); // neither side pays the first batch's warm-up
    const rawStarted = Date.now();
    const raw = events('raw');
    for (let i = 0; i < raw.length; i += 500) await client.events.appendBatch(raw.slice(i, i + 500));
    const rawMs = Date.now() - rawStarted;
    const recorder = client.recorder({ maxBatchEvents: 500, lingerMs: 20 });
    const started = Date.now();
    await Promise.all(events('paced').map((e) => recorder.record(e)));
    await recorder.flush();
    const ms = Date.now() - started;
    await recorder.close();
    expect(recorder.counters.sent).toBe(5000);
    console.log(
      `5,000 events: raw batches of 500 in ${rawMs} ms, the recorder in ${ms} ms: ${(rawMs / ms).toFixed(2)}× raw`,
    );
    // A loose guard on a shared 2-core machine; the bench scenario is where 0.9× is measured.
    expect(rawMs / ms).toBeGreaterThan(0.5);
  });

  it('reports an event the service refuses, with its fields, and stores the rest of its batch', async () => {
    const recorder = client.recorder({ lingerMs: 1000, maxBatchEvents: 10 });
    const rejections: RejectedEvent[] = [];
    const reading = (async () => {
      for await (const r of recorder.rejected()) rejections.push(r);
    })();
    const events = Array.from({ length: 10 }, (_, n) => event('refused', 0, n));
    events[4] = { ...events[4]!, actor: '' };
    await Promise.all(events.map((e) => recorder.record(e)));
    await recorder.flush();
    await recorder.close();
    await reading;
    expect(rejections).toHaveLength(1);
    expect(rejections[0]!.event.context).toEqual({ producer: 0, n: 4 });
    expect(rejections[0]!.error).toMatchObject({ status: 400, code: 'VALIDATION_ERROR' });
    expect(rejections[0]!.fields.map((f) => f.field)).toEqual(['events[4].actor']);
    const kept = (await stored('refused')).map((e) => e.context?.n).sort((a, b) => a! - b!);
    expect(kept).toEqual([0, 1, 2, 3, 5, 6, 7, 8, 9]);
    expect(recorder.counters).toMatchObject({ sent: 9, rejected: 1, retried: 0 });
  });

  it('honours 503 + Retry-After: retries with the same key no sooner than asked, then stores each event once', async () => {
    const retries: { at: number; metric: RecorderMetric }[] = [];
    const recorder = client.recorder({
      lingerMs: 0,
      backoff: { baseMs: 10, capMs: 20 },
      metrics: (metric) => metric.kind === 'retried' && retries.push({ at: Date.now(), metric }),
    });
    const limit = t.config.appendQueueLimit;
    t.config.appendQueueLimit = 0; // the service's own backpressure: 503 + Retry-After: 1 for every append
    try {
      const started = Date.now();
      await Promise.all([0, 1, 2].map((n) => recorder.record(event('busy', 0, n))));
      await new Promise((resolve) => setTimeout(resolve, 2500));
      t.config.appendQueueLimit = limit;
      await recorder.flush();
      // With a backoff of at most 20 ms, only Retry-After explains a second between attempts.
      expect(retries.length).toBeGreaterThanOrEqual(2);
      expect(retries.length).toBeLessThanOrEqual(4);
      expect(retries[0]!.metric).toMatchObject({ status: 503, code: 'SERVICE_UNAVAILABLE', delayMs: 1000 });
      expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    } finally {
      t.config.appendQueueLimit = limit;
      await recorder.close();
    }
    expect(checkExactlyOnce(await stored('busy'), [3])).toMatchObject({ stored: 3, duplicates: [], missing: [] });
  });

  it('loses and doubles nothing when the application is killed mid-stream and restarts on its spool', async () => {
    const spoolDir = tempDir();
    const baseUrl = await listening(t);
    const child = spawn(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        '-r',
        'tsconfig-paths/register',
        join(__dirname, 'support', 'recorder-child.ts'),
        baseUrl,
        KEYS.acme,
        spoolDir,
        'killed',
        '4',
        '1000',
      ],
      { cwd: join(__dirname, '..'), stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const safe = [0, 0, 0, 0];
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    let buffered = '';
    const killed = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const [producer, n] = line.split(' ').map(Number);
        if (producer !== undefined && n !== undefined && !Number.isNaN(n)) safe[producer] = n + 1;
      }
      // Killed while events are being recorded and batches sent: some acknowledged, some in the spool only.
      if (safe.reduce((a, b) => a + b, 0) >= 1500) child.kill('SIGKILL');
    });
    await killed;
    expect(child.signalCode === 'SIGKILL' ? 'killed' : `exited: ${stderr}`).toBe('killed');
    const before = (await stored('killed')).length;
    const recorder = client.recorder({ spoolDir, lingerMs: 20 });
    await recorder.ready();
    await recorder.flush();
    await recorder.close();
    const result = checkExactlyOnce(await stored('killed'), safe);
    expect(result).toMatchObject({ duplicates: [], missing: [], outOfOrder: [] });
    expect(result.stored).toBeGreaterThanOrEqual(safe.reduce((a, b) => a + b, 0));
    // The spool keeps nothing once everything is acknowledged: its settled files were removed.
    expect(readdirSync(spoolDir).filter((f) => f.endsWith('.log'))).toHaveLength(1);
    console.log(
      `killed after ${safe.join('+')} safe events, ${before} stored then; ${result.stored} stored after the restart (${recorder.counters.sent} sent by it)`,
    );
  }, 90_000);
});
