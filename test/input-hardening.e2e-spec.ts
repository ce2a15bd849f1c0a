import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/** docs/contract.md §8 and issue 10 items 9–11, 13–15: request bodies are I-JSON, cursors stay on their endpoint, errors say what is wrong. */
describe('Input hardening (contract §8)', () => {
  let t: TestApp;
  const postRaw = (text: string, key: string = KEYS.acme) =>
    t
      .http()
      .post('/v1/events')
      .set(...bearer(key))
      .set('Content-Type', 'application/json')
      .send(text);
  const get = (path: string, key: string = KEYS.acme) =>
    t
      .http()
      .get(path)
      .set(...bearer(key));
  const count = async () => (await t.dataSource.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM events`))[0].n;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  describe('member names are stored as sent (item 9)', () => {
    it.each(['constructor', 'prototype', 'hasOwnProperty', 'toString', '__defineGetter__'])(
      'keeps a context key named %s at the top and deep inside, and hashes it',
      async (name) => {
        const context = { [name]: 1, nested: { [name]: { [name]: 'x' } }, list: [{ [name]: null }] };
        const res = await postRaw(JSON.stringify({ actor: 'a', action: 'b', context })).expect(201);
        expect(res.body.data.context).toEqual(context);
        const stored = (await get(`/v1/events/${res.body.data.id}`).expect(200)).body.data;
        expect(stored.context).toEqual(context);
        expect(stored.hash).toBe(res.body.data.hash);
        const verified = (await get(`/v1/events/${res.body.data.id}/verify`).expect(200)).body.data;
        expect(verified.valid).toBe(true);
      },
    );

    it.each(['constructor', 'prototype'])(
      'answers an unknown top-level member named %s like any other',
      async (name) => {
        const res = await postRaw(`{"actor":"a","action":"b","${name}":{"x":1}}`).expect(400);
        expect(res.body.error.details.fields).toEqual([{ field: name, message: `unknown field '${name}'` }]);
      },
    );

    it('refuses __proto__ anywhere with 400 naming it', async () => {
      const res = await postRaw('{"actor":"a","action":"b","context":{"list":[{"__proto__":{"x":1}}]}}').expect(400);
      expect(res.body.error.details.fields).toEqual([
        { field: 'context.list[0].__proto__', message: "keys named '__proto__' are not accepted" },
      ]);
    });
  });

  describe('duplicate member names (item 10)', () => {
    it.each([
      ['at the top', '{"actor":"a","action":"b","actor":"c"}', 'actor'],
      ['in context', '{"actor":"a","action":"b","context":{"k":1,"k":2}}', 'context.k'],
      [
        'deep in an array',
        '{"actor":"a","action":"b","context":{"l":[1,{"x":{"k":1,"j":0,"k":1}}]}}',
        'context.l[1].x.k',
      ],
      ['spelled with an escape', '{"actor":"a","action":"b","context":{"k":1,"\\u006b":2}}', 'context.k'],
    ])('400 VALIDATION_ERROR %s, and nothing is written', async (_name, text, field) => {
      const before = await count();
      const res = await postRaw(text).expect(400);
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { fields: [{ field, message: expect.stringContaining('duplicate') }] },
      });
      expect(await count()).toBe(before);
    });

    it('accepts the same name in sibling objects', async () => {
      await postRaw('{"actor":"a","action":"b","context":{"x":{"k":1},"y":{"k":1},"l":[{"k":1},{"k":2}]}}').expect(201);
    });
  });

  describe('deep nesting (item 11)', () => {
    it.each([
      [
        '1,500 levels of objects in 3 KB',
        `{"actor":"a","action":"b","context":${'{"d":'.repeat(1500)}1${'}'.repeat(1500)}}`,
        'context',
      ],
      [
        '20,000 levels of arrays',
        `{"actor":"a","action":"b","context":{"d":${'['.repeat(20000)}${']'.repeat(20000)}}}`,
        'context',
      ],
      [
        '10,000 levels of objects as an unknown member',
        `{"actor":"a","action":"b","x":${'{"d":'.repeat(10000)}1${'}'.repeat(10000)}}`,
        'x',
      ],
      ['1,000 levels of arrays in actor', `{"actor":${'['.repeat(1000)}${']'.repeat(1000)},"action":"b"}`, 'actor'],
      ['20,000 levels of arrays as the body', `${'['.repeat(20000)}${']'.repeat(20000)}`, 'body'],
    ])('%s: 400 naming the member, never 500', async (_name, text, field) => {
      const res = await postRaw(text).expect(400);
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { fields: [{ field, message: expect.stringContaining('levels') }] },
      });
    });

    it('names the batch item member nested too deeply', async () => {
      const text = `{"events":[{"actor":"a","action":"b"},{"actor":${'['.repeat(1000)}${']'.repeat(1000)},"action":"b"}]}`;
      const res = await t
        .http()
        .post('/v1/events/batch')
        .set(...bearer(KEYS.acme))
        .set('Content-Type', 'application/json')
        .send(text)
        .expect(400);
      expect(res.body.error.details.fields).toEqual([
        { field: 'events[1].actor', message: expect.stringContaining('levels') },
      ]);
    });

    it('keeps the context depth limit as it was (32 accepted, 33 refused on context)', async () => {
      const nest = (n: number): string => `${'{"d":'.repeat(n - 1)}{"leaf":true}${'}'.repeat(n - 1)}`;
      await postRaw(`{"actor":"a","action":"b","context":${nest(32)}}`).expect(201);
      const res = await postRaw(`{"actor":"a","action":"b","context":${nest(33)}}`).expect(400);
      expect(res.body.error.details.fields).toEqual([expect.objectContaining({ field: 'context' })]);
    });
  });

  describe('error details (item 14)', () => {
    it('names a bad limit once', async () => {
      const res = await get('/v1/events?limit=abc').expect(400);
      expect(res.body.error.details.fields).toEqual([
        { field: 'limit', message: 'limit must be an integer between 1 and 200' },
      ]);
    });

    it.each([
      ['actor', { actor: 5, action: 'b' }, 'actor must be a string'],
      ['action', { actor: 'a', action: true }, 'action must be a string'],
      ['resource', { actor: 'a', action: 'b', resource: 7 }, 'resource must be a string'],
      ['chain', { actor: 'a', action: 'b', chain: 7 }, 'chain must be a string'],
    ])('a %s of the wrong type is a type error, said once', async (field, body, message) => {
      const res = await postRaw(JSON.stringify(body)).expect(400);
      expect(res.body.error.details.fields).toEqual([{ field, message }]);
    });

    it.each([
      ['"a string"', 'body must be a JSON object'],
      ['42', 'body must be a JSON object'],
      ['null', 'body must be a JSON object'],
      ['[1,2]', 'body must be a JSON object'],
      ['{"actor":', 'body is not valid JSON'],
      ['{"actor":"a",}', 'body is not valid JSON'],
    ])('body %s: %s', async (text, message) => {
      const res = await postRaw(text).expect(400);
      expect(res.body.error.details.fields).toEqual([{ field: 'body', message }]);
    });

    it('refuses a body that is not UTF-8 rather than altering it', async () => {
      const bytes = Buffer.concat([
        Buffer.from('{"actor":"a'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('","action":"b"}'),
      ]);
      const res = await t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .set('Content-Type', 'application/json')
        .serialize((b: unknown) => b as string)
        .send(bytes)
        .expect(400);
      expect(res.body.error.details.fields).toEqual([{ field: 'body', message: expect.stringContaining('UTF-8') }]);
    });

    it.each([
      ['/v1/events/%E0%A4%A', 'id'],
      ['/v1/events/%E0%A4%A/verify', 'id'],
      ['/v1/chain/%E0%A4%A/status', 'chainId'],
      ['/v1/chain/%/checkpoint', 'chainId'],
      ['/v1/chain/%ZZ/verify?limit=1', 'chainId'],
    ])('a malformed path parameter in %s is a 400 naming %s', async (path, field) => {
      const res = await get(path).expect(400);
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { fields: [{ field, message: `${field} is not valid percent-encoded UTF-8` }] },
      });
    });

    it.each([
      '/v1/events/%ZZ',
      '/v1/events/%E0%A4%A/verify',
      '/v1/chain/%ZZ/status',
      '/v1/chain/%/consistency?from=0&to=1',
    ])('authentication comes first: %s without a key is 401 (contract §8)', async (path) => {
      const res = await t.http().get(path).expect(401);
      expect(res.body.error.code).toBe('UNAUTHORIZED');
    });

    it.each(['0x10', '1e1', '+7', '7.0', ' 7', '010'])('limit=%s is refused: decimal digits only', async (limit) => {
      const res = await get(`/v1/events?limit=${encodeURIComponent(limit)}`).expect(400);
      expect(res.body.error.details.fields).toEqual([
        { field: 'limit', message: 'limit must be an integer between 1 and 200' },
      ]);
    });

    it('limit=7 is a number', async () => {
      await get('/v1/chains?limit=7').expect(200);
    });

    it('a malformed segment that is no parameter is still an unknown route', async () => {
      const res = await get('/v1/ev%ZZents').expect(404);
      expect(res.body.error).toMatchObject({ code: 'NOT_FOUND', message: 'No route for GET /v1/ev%ZZents.' });
    });

    it.each(['constructor', 'hasOwnProperty', 'toString', '__proto__', '__proto__[x]'])(
      'refuses a query parameter named %s as unknown (a member of every object, which the DTO check cannot see)',
      async (name) => {
        const res = await get(`/v1/events?${name}=x`).expect(400);
        expect(res.body.error.details.fields).toEqual([{ field: name, message: `unknown field '${name}'` }]);
      },
    );

    it.each(['/health/live', '/health/ready'])('%s refuses unknown query parameters', async (path) => {
      const res = await t.http().get(`${path}?verbose=1`).expect(400);
      expect(res.body.error.details.fields).toEqual([{ field: 'verbose', message: "unknown field 'verbose'" }]);
    });
  });
});

describe('Every API response carries nosniff and no-store (contract §8, item 15)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each([
    [
      'a created event',
      () =>
        t
          .http()
          .post('/v1/events')
          .set(...bearer(KEYS.acme))
          .send({ actor: 'a', action: 'b' }),
    ],
    [
      'a list',
      () =>
        t
          .http()
          .get('/v1/events')
          .set(...bearer(KEYS.acme)),
    ],
    ['a 401', () => t.http().get('/v1/events')],
    [
      'a 400 from the body parser',
      () =>
        t
          .http()
          .post('/v1/events')
          .set(...bearer(KEYS.acme))
          .set('Content-Type', 'application/json')
          .send('{'),
    ],
    [
      'a 415',
      () =>
        t
          .http()
          .post('/v1/events')
          .set(...bearer(KEYS.acme))
          .set('Content-Type', 'text/plain')
          .send('x'),
    ],
    ['a 404 for an unknown route', () => t.http().get('/nowhere')],
    [
      'the export',
      () =>
        t
          .http()
          .get('/v1/events/export?format=csv')
          .set(...bearer(KEYS.acme)),
    ],
    [
      'the checkpoint key',
      () =>
        t
          .http()
          .get('/v1/checkpoint-key')
          .set(...bearer(KEYS.acme)),
    ],
    ['/openapi.json', () => t.http().get('/openapi.json')],
    ['/health/live', () => t.http().get('/health/live')],
  ])('%s', async (_name, send) => {
    const res = await send();
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cache-control']).toBe('no-store');
  });
});

describe('A cursor is valid only on the endpoint that issued it (contract §8, item 13)', () => {
  let t: TestApp;
  const get = (path: string) =>
    t
      .http()
      .get(path)
      .set(...bearer(KEYS.acme));
  beforeAll(async () => {
    t = await startTestApp();
    for (const chain of ['c1', 'c2', 'c3']) {
      await t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send({ actor: 'a', action: 'b', chain })
        .expect(201);
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it('a /v1/events cursor on /v1/chains, and the reverse, is 400 on cursor', async () => {
    const events = (await get('/v1/events?limit=1').expect(200)).body.nextCursor as string;
    const chains = (await get('/v1/chains?limit=1').expect(200)).body.nextCursor as string;
    expect((await get(`/v1/events?cursor=${events}`).expect(200)).body.data).toHaveLength(2);
    expect((await get(`/v1/chains?cursor=${chains}`).expect(200)).body.data).toHaveLength(2);
    for (const path of [`/v1/chains?cursor=${events}`, `/v1/events?cursor=${chains}`]) {
      const res = await get(path).expect(400);
      expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'cursor' }] } });
    }
  });
});

describe('A cursor is valid only for the account it was issued to (contract §8, item 13)', () => {
  let t: TestApp;
  const get = (path: string, key: string) =>
    t
      .http()
      .get(path)
      .set(...bearer(key));
  beforeAll(async () => {
    t = await startTestApp();
    for (const key of [KEYS.acme, KEYS.acme, KEYS.globex, KEYS.globex]) {
      for (const chain of [`c-${key.length}-1`, `c-${key.length}-2`]) {
        await t
          .http()
          .post('/v1/events')
          .set(...bearer(key))
          .send({ actor: 'a', action: 'b', chain })
          .expect(201);
      }
    }
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(['/v1/events', '/v1/chains'])("another account's nextCursor on %s is 400 on cursor", async (path) => {
    const acme = (await get(`${path}?limit=1`, KEYS.acme).expect(200)).body.nextCursor as string;
    expect(acme).toEqual(expect.any(String));
    expect((await get(`${path}?cursor=${acme}`, KEYS.acme).expect(200)).body.data.length).toBeGreaterThan(0);
    // Before: 200 with globex's own rows, paged from acme's position.
    const res = await get(`${path}?cursor=${acme}`, KEYS.globex).expect(400);
    expect(res.body.error).toMatchObject({ code: 'VALIDATION_ERROR', details: { fields: [{ field: 'cursor' }] } });
  });
});
