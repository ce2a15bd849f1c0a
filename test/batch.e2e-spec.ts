import { ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MAX_BATCH_BODY_BYTES, MAX_BATCH_EVENTS } from '@app/common';
import { assertChainIntact } from './support/chain-check';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

interface EventBody {
  id: string;
  chain: { id: string; name: string; position: number };
  actor: string;
  action: string;
  previousHash: string;
  hash: string;
}

describe('POST /v1/events/batch (contract §9)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const batch = (body: unknown, apiKey: string = KEYS.acme, idempotencyKey?: string) => {
    const req = t
      .http()
      .post('/v1/events/batch')
      .set(...bearer(apiKey));
    if (idempotencyKey !== undefined) req.set('Idempotency-Key', idempotencyKey);
    return req.send(body as object);
  };
  const single = (body: unknown, apiKey: string = KEYS.acme, idempotencyKey?: string) => {
    const req = t
      .http()
      .post('/v1/events')
      .set(...bearer(apiKey));
    if (idempotencyKey !== undefined) req.set('Idempotency-Key', idempotencyKey);
    return req.send(body as object);
  };
  const chainsNamed = async (name: string) =>
    await t.dataSource.query<{ id: string }[]>(
      `SELECT audit_uuid_ulid('chn', id) AS id FROM chains WHERE name = $1 ORDER BY id`,
      [name],
    );
  const countIn = async (name: string) =>
    (
      await t.dataSource.query<[{ n: number }]>(
        `SELECT count(*)::int AS n FROM events e JOIN chains c ON c.id = e.chain_id WHERE c.name = $1`,
        [name],
      )
    )[0].n;
  const chainIdOf = async (name: string, account = 'acme') =>
    (
      await t.dataSource.query<[{ id: string }]>(
        `SELECT audit_uuid_ulid('chn', c.id) AS id FROM chains c JOIN accounts a ON a.id = c.account_id WHERE c.name = $1 AND a.name = $2`,
        [name, account],
      )
    )[0].id;

  it('appends every event in request order, chains created on first use, consecutive positions per chain', async () => {
    const events = [
      { actor: 'a0', action: 'x', chain: 'mix-a' },
      { actor: 'a1', action: 'x', chain: 'mix-b', resource: 'r:1', context: { n: 1 } },
      { actor: 'a2', action: 'x', chain: 'mix-a' },
      { actor: 'a3', action: 'x' },
      { actor: 'a4', action: 'x', chain: 'mix-a' },
    ];
    const res = await batch({ events }).expect(201);
    const data = res.body.data as EventBody[];
    expect(data.map((e) => e.actor)).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
    expect(data.map((e) => e.chain.position)).toEqual([1, 1, 2, 1, 3]);
    expect(data[2]!.previousHash).toBe(data[0]!.hash);
    expect(data[4]!.previousHash).toBe(data[2]!.hash);
    // The single endpoint produces the same events: the next one links on.
    const next = await single({ actor: 'a5', action: 'x', chain: 'mix-a' }).expect(201);
    expect(next.body.data.chain.position).toBe(4);
    expect(next.body.data.previousHash).toBe(data[4]!.hash);
    for (const name of ['mix-a', 'mix-b', 'default']) await assertChainIntact(t.dataSource, await chainIdOf(name));
  });

  it('is all or nothing: a bad item in the middle writes nothing, not even a new chain', async () => {
    const res = await batch({
      events: [
        { actor: 'a', action: 'x', chain: 'atomic-new' },
        { actor: 'a', action: 5, chain: 'atomic-new' },
        { actor: 'a', action: 'x', chain: 'atomic-other' },
      ],
    }).expect(400);
    expect(res.body.error.details.fields).toEqual([{ field: 'events[1].action', message: 'action must be a string' }]);
    expect(await chainsNamed('atomic-new')).toEqual([]);
    expect(await chainsNamed('atomic-other')).toEqual([]);
  });

  it('is all or nothing when the database refuses one item, while the work it shared a transaction with is written', async () => {
    // Only the database can refuse this item, so it gets past validation into the queue.
    await t.dataSource.query(`ALTER TABLE events ADD CONSTRAINT ck_test_poison CHECK (action <> 'poison')`);
    try {
      const results = await Promise.all([
        batch({ events: [{ actor: 'a', action: 'ok', chain: 'db-fine' }] }),
        single({ actor: 'a', action: 'ok', chain: 'db-single' }),
        batch({
          events: [
            { actor: 'a', action: 'ok', chain: 'db-refused' },
            { actor: 'a', action: 'poison', chain: 'db-refused-too' },
            { actor: 'a', action: 'ok', chain: 'db-fine' },
          ],
        }),
        batch({
          events: [
            { actor: 'b', action: 'ok', chain: 'db-fine' },
            { actor: 'b', action: 'ok' },
          ],
        }),
      ]);
      expect(results.map((r) => r.status)).toEqual([201, 201, 500, 201]);
    } finally {
      await t.dataSource.query(`ALTER TABLE events DROP CONSTRAINT ck_test_poison`);
    }
    expect(await chainsNamed('db-refused')).toEqual([]);
    expect(await chainsNamed('db-refused-too')).toEqual([]);
    expect(await countIn('db-fine')).toBe(2);
    expect(await countIn('db-single')).toBe(1);
    await assertChainIntact(t.dataSource, await chainIdOf('db-fine'));
  });

  it('names every bad item by its path with the message the single endpoint gives', async () => {
    const bad: unknown[] = [
      { actor: 5, action: 'x' },
      { actor: 'a'.repeat(257), action: '', chain: 'no spaces' },
      { actor: 'a', action: 'x', extra: 1 },
      { actor: 'a', action: 'x', constructor: 1 },
      { actor: 'a', action: 'x', context: [1] },
      { action: 'x' },
    ];
    const expected: { field: string; message: string }[] = [];
    for (const [i, body] of bad.entries()) {
      const res = await single(body).expect(400);
      for (const f of res.body.error.details.fields as { field: string; message: string }[])
        expected.push({ field: `events[${i + 1}].${f.field}`, message: f.message });
    }
    expected.push({ field: 'events[7]', message: 'events[7] must be a JSON object' });
    expected.push({ field: 'events[8]', message: 'events[8] must be a JSON object' });
    const res = await batch({
      events: [{ actor: 'ok', action: 'x', chain: 'named' }, ...bad, 'text', [1], { actor: 'ok', action: 'x' }],
    }).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.fields).toEqual(expected);
    expect(expected.map((f) => f.field)).toEqual(
      expect.arrayContaining([
        'events[1].actor',
        'events[2].actor',
        'events[2].action',
        'events[2].chain',
        'events[3].extra',
        'events[4].constructor',
        'events[5].context',
        'events[6].actor',
      ]),
    );
    expect(await chainsNamed('named')).toEqual([]);
  });

  it.each([
    ['no items', { events: [] }, 'events'],
    [
      '1,001 items',
      { events: Array.from({ length: MAX_BATCH_EVENTS + 1 }, () => ({ actor: 'a', action: 'b' })) },
      'events',
    ],
    ['no events member', {}, 'events'],
    ['events not an array', { events: { actor: 'a', action: 'b' } }, 'events'],
    ['another top-level member', { events: [{ actor: 'a', action: 'b', chain: 'top' }], chain: 'top' }, 'chain'],
  ])('400 on %s, naming %s', async (_name, body, field) => {
    const res = await batch(body).expect(400);
    expect((res.body.error.details.fields as { field: string }[]).map((f) => f.field)).toEqual([field]);
    expect(await chainsNamed('top')).toEqual([]);
  });

  it('takes 1,000 items', async () => {
    const events = Array.from({ length: MAX_BATCH_EVENTS }, (_, i) => ({
      actor: `a${i}`,
      action: 'b',
      chain: 'thousand',
    }));
    const res = await batch({ events }).expect(201);
    expect((res.body.data as EventBody[]).map((e) => e.chain.position)).toEqual(events.map((_, i) => i + 1));
    await assertChainIntact(t.dataSource, await chainIdOf('thousand'));
  });

  describe('body size', () => {
    /** A batch body of exactly `bytes` bytes (JSON whitespace fills it up). */
    const bodyOf = (bytes: number) => {
      const json = JSON.stringify({ events: [{ actor: 'a', action: 'b', chain: 'size' }] });
      return json.slice(0, -1) + ' '.repeat(bytes - Buffer.byteLength(json)) + '}';
    };
    const send = (body: string, header?: string) => {
      const req = t.http().post('/v1/events/batch').set('Content-Type', 'application/json');
      if (header) req.set('Authorization', header);
      return req.send(body);
    };

    it('takes a body of 8 MiB, refuses 8 MiB + 1 with 413 (nothing written)', async () => {
      expect(Buffer.byteLength(bodyOf(MAX_BATCH_BODY_BYTES))).toBe(MAX_BATCH_BODY_BYTES);
      await send(bodyOf(MAX_BATCH_BODY_BYTES), `Bearer ${KEYS.acme}`).expect(201);
      const res = await send(bodyOf(MAX_BATCH_BODY_BYTES + 1), `Bearer ${KEYS.acme}`).expect(413);
      expect(res.body.error).toMatchObject({
        code: 'PAYLOAD_TOO_LARGE',
        details: { limitBytes: MAX_BATCH_BODY_BYTES },
      });
      expect(await countIn('size')).toBe(1);
    });

    it('without a valid key, 401 comes before 413', async () => {
      for (const header of [undefined, 'Bearer not-a-key-0123456789']) {
        const res = await send(bodyOf(MAX_BATCH_BODY_BYTES + 1), header).expect(401);
        expect(res.body.error.code).toBe('UNAUTHORIZED');
      }
    });

    it('the 8 MiB limit is this route’s only: POST /v1/events stays at 64 KiB', async () => {
      const res = await single({ actor: 'a', action: 'b', context: { x: 'y'.repeat(70 * 1024) } }).expect(413);
      expect(res.body.error.details.limitBytes).toBe(64 * 1024);
    });
  });

  it('keeps every chain contiguous and every request in order under concurrent batches and singles on one chain', async () => {
    const batches = Array.from({ length: 8 }, (_, b) =>
      batch({
        events: Array.from({ length: 40 }, (_, i) => ({
          actor: `b${b}`,
          action: `${i}`,
          chain: i % 4 === 0 ? `hot-side-${b}` : 'hot',
        })),
      }),
    );
    const singles = Array.from({ length: 60 }, (_, i) => single({ actor: 's', action: `${i}`, chain: 'hot' }));
    const results = await Promise.all([...batches, ...singles]);
    results.forEach((r) => expect(r.status).toBe(201));
    for (const res of results.slice(0, 8)) {
      const data = res.body.data as EventBody[];
      expect(data.map((e) => Number(e.action))).toEqual(data.map((_, i) => i));
      const onHot = data.filter((_, i) => i % 4 !== 0);
      // One batch's events of a chain are consecutive: nothing of another request comes between.
      onHot.forEach((e, i) => expect(e.chain.position).toBe(onHot[0]!.chain.position + i));
      onHot.slice(1).forEach((e, i) => expect(e.previousHash).toBe(onHot[i]!.hash));
    }
    expect(await countIn('hot')).toBe(8 * 30 + 60);
    const positions = results.flatMap((r) =>
      ([] as EventBody[])
        .concat(r.body.data as EventBody | EventBody[])
        .filter((e) => e.chain.id === results[8]!.body.data.chain.id),
    );
    expect(positions.map((e) => e.chain.position).sort((a, b) => a - b)).toEqual(positions.map((_, i) => i + 1));
    await assertChainIntact(t.dataSource, await chainIdOf('hot'));
  });

  describe('Idempotency-Key', () => {
    it('one key covers the whole batch: the replay is the whole first answer, nothing appended again', async () => {
      const body = {
        events: [
          { actor: 'a', action: 'x', chain: 'idem-b1' },
          { actor: 'b', action: 'y', chain: 'idem-b2' },
        ],
      };
      const first = await batch(body, KEYS.acme, 'batch-1').expect(201);
      expect(first.headers['idempotent-replayed']).toBeUndefined();
      const again = await batch(body, KEYS.acme, 'batch-1').expect(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.text).toBe(first.text);
      expect(await countIn('idem-b1')).toBe(1);
      expect(await countIn('idem-b2')).toBe(1);
      const other = await batch({ events: [body.events[0]] }, KEYS.acme, 'batch-1').expect(422);
      expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    });

    it('keys are one namespace per account: a key first used on the other endpoint is 422 IDEMPOTENCY_KEY_REUSED', async () => {
      const event = { actor: 'a', action: 'x', chain: 'idem-cross' };
      await single(event, KEYS.acme, 'cross-1').expect(201);
      const res = await batch({ events: [event] }, KEYS.acme, 'cross-1').expect(422);
      expect(res.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
      await batch({ events: [event] }, KEYS.acme, 'cross-2').expect(201);
      expect((await single(event, KEYS.acme, 'cross-2').expect(422)).body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
      expect(await countIn('idem-cross')).toBe(2);
    });

    it('many concurrent batches with one key append the batch exactly once', async () => {
      const body = {
        events: Array.from({ length: 20 }, (_, i) => ({ actor: 'a', action: `${i}`, chain: 'idem-race' })),
      };
      const results = await Promise.all(Array.from({ length: 10 }, () => batch(body, KEYS.acme, 'race')));
      results.forEach((r) => expect([201, 409]).toContain(r.status));
      expect(await countIn('idem-race')).toBe(20);
    });
  });

  it('needs the ingest scope: a read-only key is 403 and writes nothing', async () => {
    const body = { events: [{ actor: 'a', action: 'x', chain: 'scoped' }] };
    expect((await batch(body, KEYS.acmeReadOnly).expect(403)).body.error.code).toBe('FORBIDDEN');
    expect(await chainsNamed('scoped')).toEqual([]);
    await batch(body, KEYS.acmeIngestOnly).expect(201);
  });

  it('keeps accounts apart: another account’s chain of the same name is a separate chain', async () => {
    const body = {
      events: [
        { actor: 'a', action: 'x', chain: 'tenant' },
        { actor: 'a', action: 'y', chain: 'tenant' },
      ],
    };
    const mine = (await batch(body, KEYS.acme).expect(201)).body.data as EventBody[];
    const theirs = (await batch(body, KEYS.globex).expect(201)).body.data as EventBody[];
    expect(theirs.map((e) => e.chain.position)).toEqual([1, 2]);
    expect(theirs[0]!.chain.id).not.toBe(mine[0]!.chain.id);
    expect(await chainsNamed('tenant')).toHaveLength(2);
    await t
      .http()
      .get(`/v1/chain/${theirs[0]!.chain.id}/status`)
      .set(...bearer(KEYS.acme))
      .expect(404);
  });
});

describe('POST /v1/events/batch and the rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ rateLimitPerSecond: 3 });
  });
  afterAll(async () => {
    await t.close();
  });

  it('a batch counts as one request for RATE_LIMIT_PER_SECOND, whatever its size', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const events = Array.from({ length: 10 }, () => ({ actor: 'a', action: 'b', chain: 'rated' }));
      const res = await t
        .http()
        .post('/v1/events/batch')
        .set(...bearer(KEYS.acme))
        .send({ events });
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s === 201)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(2);
  });
});

describe('cli ingest against the service: resumption after a kill (issue 11)', () => {
  let t: TestApp;
  let url: string;
  let dir: string;
  beforeAll(async () => {
    t = await startTestApp();
    await t.app.listen(0, '127.0.0.1');
    url = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
    dir = mkdtempSync(join(tmpdir(), 'ingest-e2e-'));
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const LINES = 6000;
  const ingest = (file: string): ChildProcess =>
    spawn(
      process.execPath,
      [
        '-r',
        'ts-node/register/transpile-only',
        '-r',
        'tsconfig-paths/register',
        'apps/cli/src/main.ts',
        'ingest',
        file,
        '--url',
        url,
        '--batch-size',
        '20',
      ],
      { cwd: join(__dirname, '..'), env: { ...process.env, AUDIT_TRAIL_KEY: KEYS.acmeIngestOnly }, stdio: 'pipe' },
    );
  const exited = (child: ChildProcess) =>
    new Promise<{ code: number | null; signal: NodeJS.Signals | null; out: string }>((resolve) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.on('exit', (code, signal) => resolve({ code, signal, out }));
    });
  const count = async () => (await t.dataSource.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM events`))[0].n;

  it('killed mid-file and run again, appends every line exactly once', async () => {
    const file = join(dir, 'events.ndjson');
    const lines = Array.from({ length: LINES }, (_, i) =>
      JSON.stringify({ actor: 'ingest', action: 'line', chain: `ingest-${i % 3}`, context: { line: i + 1 } }),
    );
    writeFileSync(file, lines.join('\n') + '\n');

    const first = ingest(file);
    const firstExit = exited(first);
    // Kill it once some batches are in (no timing: we wait for the database to show them).
    while ((await count()) < 500) await new Promise((resolve) => setTimeout(resolve, 20));
    first.kill('SIGKILL');
    expect((await firstExit).signal).toBe('SIGKILL');
    const atKill = await count();
    expect(atKill).toBeLessThan(LINES);

    const second = await exited(ingest(file));
    expect({ code: second.code, out: second.out }).toEqual({ code: 0, out: expect.stringContaining('replayed') });
    const perLine = await t.dataSource.query<{ line: number; n: number }[]>(
      `SELECT (context->>'line')::int AS line, count(*)::int AS n FROM events GROUP BY 1 ORDER BY 1`,
    );
    expect(perLine).toEqual(lines.map((_, i) => ({ line: i + 1, n: 1 })));
    for (const name of ['ingest-0', 'ingest-1', 'ingest-2']) {
      const [{ id }] = await t.dataSource.query<[{ id: string }]>(
        `SELECT audit_uuid_ulid('chn', id) AS id FROM chains WHERE name = $1`,
        [name],
      );
      expect(await assertChainIntact(t.dataSource, id)).toBe(LINES / 3);
    }
    // Each chain keeps the file's order.
    const order = await t.dataSource.query<{ line: number }[]>(
      `SELECT (e.context->>'line')::int AS line FROM events e JOIN chains c ON c.id = e.chain_id WHERE c.name = 'ingest-1' ORDER BY e.position`,
    );
    expect(order.map((r) => r.line)).toEqual(lines.map((_, i) => i + 1).filter((l) => (l - 1) % 3 === 1));
  }, 180_000);
});
