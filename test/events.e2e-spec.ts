import { GENESIS_HASH } from '@app/hashing';
import { answerHash } from './support/answer-hash';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

describe('POST /v1/events, GET /v1/events/:id', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (body: unknown, key: string = KEYS.acme) =>
    t
      .http()
      .post('/v1/events')
      .set(...bearer(key))
      .send(body as object);

  it('appends to the default chain with a genesis link, a real hash and server times', async () => {
    const res = await post({ actor: 'alice@example.com', action: 'user.login', chain: 'e2e-first' }).expect(201);
    const e = res.body.data;
    expect(Object.keys(res.body)).toEqual(['data']);
    expect(e).toMatchObject({ actor: 'alice@example.com', action: 'user.login', resource: null, context: null });
    expect(e.id).toMatch(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(e.chain).toEqual({
      id: expect.stringMatching(/^chn_[0-9A-HJKMNP-TV-Z]{26}$/),
      name: 'e2e-first',
      position: 1,
    });
    expect(e.previousHash).toBe(GENESIS_HASH);
    expect(e.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(e.createdAt).toBe(e.timestamp);
    expect(e.hash).toBe(answerHash(e));
  });

  it('links the next event to the previous one and keeps context byte-faithful', async () => {
    const context = {
      ip: '10.0.0.1',
      nested: { list: [1, 2.5, -0.25, 'é€😀', null, true], empty: {} },
      big: 9007199254740991,
      tiny: 1e-7,
    };
    const first = (await post({ actor: 'bob', action: 'doc.read', chain: 'e2e-link' }).expect(201)).body.data;
    const second = (
      await post({ actor: 'bob', action: 'doc.update', resource: 'doc:42', context, chain: 'e2e-link' }).expect(201)
    ).body.data;
    expect(second.chain).toEqual({ id: first.chain.id, name: 'e2e-link', position: 2 });
    expect(second.previousHash).toBe(first.hash);
    expect(second.context).toEqual(context);
    const stored = (
      await t
        .http()
        .get(`/v1/events/${second.id}`)
        .set(...bearer(KEYS.acme))
        .expect(200)
    ).body.data;
    expect(stored).toEqual(second);
    expect(answerHash(stored)).toBe(stored.hash);
  });

  it('uses the chain named "default" when chain is absent or null', async () => {
    const a = (await post({ actor: 'x', action: 'a.b' }).expect(201)).body.data;
    const b = (await post({ actor: 'x', action: 'a.b', chain: null }).expect(201)).body.data;
    expect(a.chain.name).toBe('default');
    expect(b.chain).toEqual({ id: a.chain.id, name: 'default', position: a.chain.position + 1 });
  });

  it('gives two accounts separate chains of the same name', async () => {
    const mine = (await post({ actor: 'x', action: 'a.b', chain: 'shared-name' }).expect(201)).body.data;
    const theirs = (await post({ actor: 'x', action: 'a.b', chain: 'shared-name' }, KEYS.globex).expect(201)).body.data;
    expect(theirs.chain.id).not.toBe(mine.chain.id);
    expect(theirs.chain.position).toBe(1);
  });

  it.each([
    ['actor missing', { action: 'a' }, 'actor'],
    ['actor empty', { actor: '', action: 'a' }, 'actor'],
    ['actor not a string', { actor: 12, action: 'a' }, 'actor'],
    ['actor null', { actor: null, action: 'a' }, 'actor'],
    ['actor over 256 code points', { actor: 'a'.repeat(257), action: 'a' }, 'actor'],
    ['action missing', { actor: 'a' }, 'action'],
    ['action over 256', { actor: 'a', action: 'b'.repeat(257) }, 'action'],
    ['resource empty', { actor: 'a', action: 'b', resource: '' }, 'resource'],
    ['resource over 512', { actor: 'a', action: 'b', resource: 'r'.repeat(513) }, 'resource'],
    ['resource not a string', { actor: 'a', action: 'b', resource: { id: 1 } }, 'resource'],
    ['context an array', { actor: 'a', action: 'b', context: [1, 2] }, 'context'],
    ['context a string', { actor: 'a', action: 'b', context: 'x' }, 'context'],
    ['context over 32 KiB', { actor: 'a', action: 'b', context: { blob: 'x'.repeat(33 * 1024) } }, 'context'],
    ['context deeper than 32', { actor: 'a', action: 'b', context: nest(33) }, 'context'],
    ['NUL in actor', { actor: 'a\u0000b', action: 'b' }, 'actor'],
    ['NUL in a context value', { actor: 'a', action: 'b', context: { k: 'v\u0000' } }, 'context.k'],
    ['NUL in a context key', { actor: 'a', action: 'b', context: { 'k\u0000': 1 } }, 'context.k\u0000'],
    ['lone surrogate in action', { actor: 'a', action: 'b\ud800' }, 'action'],
    ['lone surrogate in context', { actor: 'a', action: 'b', context: { k: '\udc00' } }, 'context.k'],
    ['unsafe integer in context', { actor: 'a', action: 'b', context: { n: 9007199254740992 } }, 'context'],
    [
      '__proto__ key in context',
      JSON.parse('{"actor":"a","action":"b","context":{"__proto__":{"x":1}}}'),
      'context.__proto__',
    ],
    ['chain with a space', { actor: 'a', action: 'b', chain: 'a b' }, 'chain'],
    ['chain over 128', { actor: 'a', action: 'b', chain: 'c'.repeat(129) }, 'chain'],
    ['chain empty', { actor: 'a', action: 'b', chain: '' }, 'chain'],
    ['client-chosen id', { actor: 'a', action: 'b', id: 'evt_x' }, 'id'],
    ['client-chosen hash', { actor: 'a', action: 'b', hash: 'f'.repeat(64) }, 'hash'],
    ['client-chosen timestamp', { actor: 'a', action: 'b', timestamp: '2020-01-01T00:00:00.000Z' }, 'timestamp'],
  ])('400 VALIDATION_ERROR: %s, and nothing is written', async (_name, body, field) => {
    const count = async () => (await t.dataSource.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM events`))[0].n;
    const before = await count();
    const res = await post(body).expect(400);
    expect(await count()).toBe(before);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.fields).toEqual(
      expect.arrayContaining([expect.objectContaining({ field, message: expect.any(String) })]),
    );
  });

  it('accepts the limits exactly: 256-code-point actor of astral characters, depth 32, chain of 128', async () => {
    await post({ actor: '😀'.repeat(256), action: 'a', context: nest(32), chain: 'c'.repeat(128) }).expect(201);
  });

  it.each([
    ['a JSON array body', '[1,2]', 'application/json', 400, 'VALIDATION_ERROR'],
    ['malformed JSON', '{"actor":', 'application/json', 400, 'VALIDATION_ERROR'],
    ['a text/plain body', 'actor=a', 'text/plain', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['a form body', 'actor=a&action=b', 'application/x-www-form-urlencoded', 415, 'UNSUPPORTED_MEDIA_TYPE'],
    [
      'a body over 64 KiB',
      JSON.stringify({ actor: 'a', action: 'b', context: { x: 'y'.repeat(70 * 1024) } }),
      'application/json',
      413,
      'PAYLOAD_TOO_LARGE',
    ],
  ])('%s answers %s %s in the envelope', async (_name, body, type, status, code) => {
    const res = await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .set('Content-Type', type)
      .send(body)
      .expect(status);
    expect(res.body).toEqual({ error: { code, message: expect.any(String), details: expect.any(Object) } });
  });

  it("404 for an unknown id, another account's event and a malformed id, identically", async () => {
    const mine = (await post({ actor: 'x', action: 'secret.read' }).expect(201)).body.data;
    for (const [key, id] of [
      [KEYS.globex, mine.id],
      [KEYS.acme, 'evt_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      [KEYS.acme, 'not-an-id'],
    ] as const) {
      const res = await t
        .http()
        .get(`/v1/events/${id}`)
        .set(...bearer(key))
        .expect(404);
      expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String), details: {} } });
      expect(JSON.stringify(res.body)).not.toContain('secret');
    }
  });

  it('400 for a query parameter on GET /v1/events/:id and POST /v1/events', async () => {
    const e = (await post({ actor: 'x', action: 'a.b' }).expect(201)).body.data;
    const res = await t
      .http()
      .get(`/v1/events/${e.id}?verbose=1`)
      .set(...bearer(KEYS.acme))
      .expect(400);
    expect(res.body.error.details.fields).toEqual([{ field: 'verbose', message: "unknown field 'verbose'" }]);
    await t
      .http()
      .post('/v1/events?x=1')
      .set(...bearer(KEYS.acme))
      .send({ actor: 'a', action: 'b' })
      .expect(400);
  });
});

describe('authentication and scopes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it.each([
    ['no Authorization header', undefined],
    ['an unknown key', 'Bearer nope-nope-nope-nope-nope'],
    ['the wrong scheme', `Basic ${KEYS.acme}`],
    ['a bare key', KEYS.acme],
    ['an empty bearer', 'Bearer '],
  ])('401 UNAUTHORIZED with WWW-Authenticate for %s, on every endpoint', async (_name, header) => {
    for (const [method, path] of [
      ['get', '/v1/events'],
      ['post', '/v1/events'],
      ['get', '/v1/events/evt_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
    ] as const) {
      const req = t.http()[method](path);
      if (header !== undefined) req.set('Authorization', header);
      const res = await req.expect(401);
      expect(res.headers['www-authenticate']).toBe('Bearer');
      expect(res.body).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String), details: {} } });
    }
  });

  it('a revoked key is refused like an unknown one', async () => {
    await t
      .http()
      .get('/v1/events')
      .set(...bearer(KEYS.globex))
      .expect(200);
    await t.dataSource.query(`UPDATE api_keys SET revoked_at = now() WHERE prefix = $1`, [KEYS.globex.slice(0, 8)]);
    // The key cache holds an answer for at most five seconds.
    await new Promise((r) => setTimeout(r, 5100));
    const res = await t
      .http()
      .get('/v1/events')
      .set(...bearer(KEYS.globex))
      .expect(401);
    expect(res.body.error.code).toBe('UNAUTHORIZED');
  });

  it('403 FORBIDDEN when the key lacks the scope', async () => {
    const write = await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acmeReadOnly))
      .send({ actor: 'a', action: 'b' })
      .expect(403);
    expect(write.body.error.code).toBe('FORBIDDEN');
    const read = await t
      .http()
      .get('/v1/events')
      .set(...bearer(KEYS.acmeIngestOnly))
      .expect(403);
    expect(read.body.error.code).toBe('FORBIDDEN');
    await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acmeIngestOnly))
      .send({ actor: 'a', action: 'b' })
      .expect(201);
    await t
      .http()
      .get('/v1/events')
      .set(...bearer(KEYS.acmeReadOnly))
      .expect(200);
  });

  it('stores keys only as SHA-256 digests', async () => {
    const rows = await t.dataSource.query<
      {
        prefix: string;
        key_digest: string;
      }[]
    >(`SELECT prefix, key_digest FROM api_keys`);
    expect(rows.length).toBe(4);
    const dump = JSON.stringify(rows);
    for (const key of Object.values(KEYS)) expect(dump).not.toContain(key);
    rows.forEach((r) => expect(r.key_digest).toMatch(/^[0-9a-f]{64}$/));
  });

  it('gives every response an X-Request-Id, echoing a sane one from the caller', async () => {
    const generated = await t
      .http()
      .get('/v1/events')
      .set(...bearer(KEYS.acme))
      .expect(200);
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await t.http().get('/v1/nope').set('X-Request-Id', 'trace-42.a').expect(401);
    expect(echoed.headers['x-request-id']).toBe('trace-42.a');
    const replaced = await t.http().get('/health/live').set('X-Request-Id', 'bad id with spaces').expect(200);
    expect(replaced.headers['x-request-id']).not.toBe('bad id with spaces');
  });

  it('unknown routes are 404 NOT_FOUND and unserved methods 405 METHOD_NOT_ALLOWED in the envelope; health needs no key', async () => {
    for (const req of [t.http().get('/v2/events'), t.http().put('/v1/events/x')]) {
      const res = await req.set(...bearer(KEYS.acme)).expect(404);
      expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String), details: {} } });
    }
    const res = await t
      .http()
      .delete('/v1/events')
      .set(...bearer(KEYS.acme))
      .expect(405);
    expect(res.body).toEqual({
      error: {
        code: 'METHOD_NOT_ALLOWED',
        message: expect.any(String),
        details: { allowedMethods: ['GET', 'HEAD', 'POST'] },
      },
    });
    await t.http().get('/health/live').expect(200);
    await t.http().get('/health/ready').expect(200);
  });
});

describe('rate limit', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ rateLimitPerSecond: 5 });
  });
  afterAll(async () => {
    await t.close();
  });

  it('429 RATE_LIMITED with Retry-After past the per-key rate; other keys are unaffected', async () => {
    const statuses: number[] = [];
    let limited: { headers: Record<string, string>; body: { error: { code: string } } } | undefined;
    for (let i = 0; i < 8; i++) {
      const res = await t
        .http()
        .get('/v1/events')
        .set(...bearer(KEYS.acme));
      statuses.push(res.status);
      if (res.status === 429) limited = res;
    }
    expect(statuses.filter((s) => s === 200).length).toBe(5);
    expect(limited?.body.error.code).toBe('RATE_LIMITED');
    expect(Number(limited?.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    await t
      .http()
      .get('/v1/events')
      .set(...bearer(KEYS.globex))
      .expect(200);
  });
});

function nest(depth: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true };
  for (let i = 1; i < depth; i++) value = { d: value };
  return value;
}
