import { request as httpRequest } from 'node:http';
import { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { MAX_BODY_VALUES, MAX_CONTEXT_VALUES, MAX_INFLATION_RATIO } from '@app/common';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/**
 * Issue 18 item 10: what one request may cost is bounded by what its body holds, refused before
 * the expensive work (parsing, validating, hashing, storing), and a full append queue refuses a
 * batch before its body is read. Timings are printed, not asserted (the machine is shared).
 */
describe('What a batch may cost (contract §8, §9)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  /** `items` events, each with a context of `keys` members whose values are strings of `width` characters. */
  const wideBatch = (keys: number, items = 1000, width = 0): string => {
    const value = (k: number) => (width === 0 ? String(k) : `"${String(k).padStart(width, 'v')}"`);
    const context = `{${Array.from({ length: keys }, (_, k) => `"k${k}":${value(k)}`).join(',')}}`;
    const item = (i: number) => `{"actor":"a${i}","action":"wide.batch","chain":"wide","context":${context}}`;
    return `{"events":[${Array.from({ length: items }, (_, i) => item(i)).join(',')}]}`;
  };
  const post = (body: string | Buffer, gzip = false, path = '/v1/events/batch') => {
    const req = t
      .http()
      .post(path)
      .set(...bearer(KEYS.acme))
      .set('Content-Type', 'application/json');
    if (gzip) req.set('Content-Encoding', 'gzip');
    return req.serialize((b: unknown) => b as string).send(body);
  };
  /** This process's CPU time (the service and the test client) and the wall time of `work`. */
  const measured = async <T>(work: () => Promise<T>): Promise<{ result: T; cpuMs: number; wallMs: number }> => {
    const [cpu0, wall0] = [process.cpuUsage(), performance.now()];
    const result = await work();
    const cpu = process.cpuUsage(cpu0);
    return { result, cpuMs: Math.round((cpu.user + cpu.system) / 1000), wallMs: Math.round(performance.now() - wall0) };
  };
  const eventsIn = async (chain: string) =>
    (
      await t.dataSource.query<[{ n: number }]>(
        `SELECT count(*)::int AS n FROM events e JOIN chains c ON c.id = e.chain_id WHERE c.name = $1`,
        [chain],
      )
    )[0].n;

  it('refuses the review’s batch (1,000 items × 600 members, 6.4 MB) on body before parsing it, and nothing is written', async () => {
    const body = wideBatch(600);
    const { result, cpuMs, wallMs } = await measured(() => post(body).expect(400));
    expect(result.body.error.details.fields).toEqual([
      { field: 'body', message: `body holds more than ${MAX_BODY_VALUES} values (object members and array items)` },
    ]);
    expect(await eventsIn('wide')).toBe(0);
    console.log(`review batch, ${body.length} bytes: 400 in ${wallMs} ms wall, ${cpuMs} ms CPU`);
  });

  it('refuses its gzip form (45 KB inflating ~140 times) with 413 before parsing it', async () => {
    const zipped = gzipSync(wideBatch(600));
    const { result, cpuMs, wallMs } = await measured(() => post(zipped, true).expect(413));
    expect(result.body.error).toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
      details: { maxInflationRatio: MAX_INFLATION_RATIO },
    });
    expect(await eventsIn('wide')).toBe(0);
    console.log(`review batch gzipped, ${zipped.length} bytes: 413 in ${wallMs} ms wall, ${cpuMs} ms CPU`);
  });

  it('accepts a gzip body that inflates less (and any small one)', async () => {
    const body = JSON.stringify({
      events: Array.from({ length: 50 }, (_, i) => ({ actor: `gz-${i}`, action: 'gzip.ok', chain: 'gzip' })),
    });
    await post(gzipSync(body), true).expect(201);
    await post(gzipSync(JSON.stringify({ actor: 'a', action: 'b', chain: 'gzip' })), true, '/v1/events').expect(201);
    expect(await eventsIn('gzip')).toBe(51);
  });

  it(`refuses a context of more than ${MAX_CONTEXT_VALUES} values, naming it, on both endpoints`, async () => {
    const context = Object.fromEntries(Array.from({ length: MAX_CONTEXT_VALUES }, (_, k) => [`k${k}`, k]));
    const over = { ...context, one: [1] }; // the member and its item: 2 values more
    const message = `context must hold at most ${MAX_CONTEXT_VALUES} values (object members and array items)`;
    const single = await post(
      JSON.stringify({ actor: 'a', action: 'b', chain: 'ctx', context: over }),
      false,
      '/v1/events',
    );
    expect(single.status).toBe(400);
    expect(single.body.error.details.fields).toEqual([{ field: 'context', message }]);
    const batch = await post(
      JSON.stringify({
        events: [
          { actor: 'a', action: 'b', chain: 'ctx' },
          { actor: 'a', action: 'b', chain: 'ctx', context: over },
        ],
      }),
    ).expect(400);
    expect(batch.body.error.details.fields).toEqual([{ field: 'events[1].context', message }]);
    await post(JSON.stringify({ actor: 'a', action: 'b', chain: 'ctx', context }), false, '/v1/events').expect(201);
    expect(await eventsIn('ctx')).toBe(1);
  });

  it('accepts the worst batch within the limits (1,000 items of 94 members, ~7.6 MB) and /health/live stays responsive meanwhile', async () => {
    const worst = wideBatch(94, 1000, 70);
    expect(worst.length).toBeLessThan(8 * 1024 * 1024);
    const { result, cpuMs, wallMs } = await measured(() => post(worst).expect(201));
    expect(result.body.data).toHaveLength(1000);
    console.log(`worst accepted batch, ${worst.length} bytes: 201 in ${wallMs} ms wall, ${cpuMs} ms CPU`);

    // Several at once, refused and accepted, while /health/live is asked every 20 ms.
    const review = wideBatch(600);
    const latencies: number[] = [];
    let running = true;
    const probe = (async () => {
      while (running) {
        const start = performance.now();
        await t.http().get('/health/live').expect(200);
        latencies.push(performance.now() - start);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const load = await measured(() =>
      Promise.all([
        ...[0, 1, 2, 3].map(() => post(review).expect(400)),
        post(gzipSync(review), true).expect(413),
        post(worst).expect(201),
        post(worst).expect(201),
      ]),
    );
    running = false;
    await probe;
    console.log(
      `4 review batches + 1 gzipped + 2 worst accepted at once: ${load.wallMs} ms wall, ${load.cpuMs} ms CPU; ` +
        `/health/live ${latencies.length} probes, slowest ${Math.round(Math.max(...latencies))} ms`,
    );
    expect(await eventsIn('wide')).toBe(3000);
  }, 120_000);

  it('refuses an append with 503 + Retry-After before reading its body when the queue is full', async () => {
    const limit = t.config.appendQueueLimit;
    t.config.appendQueueLimit = 0; // no room: what a queue full of waiting events looks like
    try {
      await t.app.listen(0, '127.0.0.1');
      const { port } = t.app.getHttpServer().address() as AddressInfo;
      // A body announced as 5 MB of which only a few bytes are ever sent: the answer cannot wait for it.
      const answer = await new Promise<{ status: number; retryAfter?: string; body: string }>((resolve, reject) => {
        const req = httpRequest({
          host: '127.0.0.1',
          port,
          method: 'POST',
          path: '/v1/events/batch',
          headers: {
            Authorization: `Bearer ${KEYS.acme}`,
            'Content-Type': 'application/json',
            'Content-Length': String(5_000_000),
          },
        });
        req.on('response', (res) => {
          let body = '';
          res.on('data', (chunk: Buffer) => (body += chunk.toString()));
          res.on('end', () => {
            resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'], body });
            req.destroy();
          });
        });
        req.on('error', reject);
        req.write('{"events":[');
      });
      expect(answer.status).toBe(503);
      expect(answer.retryAfter).toBe('1');
      expect(JSON.parse(answer.body).error.code).toBe('SERVICE_UNAVAILABLE');
    } finally {
      t.config.appendQueueLimit = limit;
    }
    await post(JSON.stringify({ events: [{ actor: 'a', action: 'b', chain: 'after-full' }] })).expect(201);
  });
});
