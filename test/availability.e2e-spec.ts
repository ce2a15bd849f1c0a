import { bearer, freshDatabase, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';
import { withAdmin } from './support/postgres';

// Taking the database away needs a server we administer; the embedded one lives in this process.
(usingPostgres() ? describe : describe.skip)('when the database is unreachable', () => {
  let t: TestApp;
  let name: string;
  beforeAll(async () => {
    const database = await freshDatabase();
    name = new URL(database.url!).pathname.slice(1);
    t = await startTestApp({}, database);
  });
  afterAll(async () => {
    await withAdmin((admin) => admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`));
    await t.close();
  });

  const cutOff = (allow: boolean) =>
    withAdmin(async (admin) => {
      await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS ${allow}`);
      if (!allow)
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
          [name],
        );
    });
  const post = (actor: string) =>
    t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .send({ actor, action: 'outage.test', chain: 'outage' });

  it('answers 503 + Retry-After, not 401, to a key it cannot look up', async () => {
    await cutOff(false);
    try {
      // KEYS.globex has not been used yet: it is not in the key cache.
      const res = await t
        .http()
        .get('/v1/chains')
        .set(...bearer(KEYS.globex));
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(res.headers['retry-after']).toBeDefined();
    } finally {
      await cutOff(true);
    }
    await t
      .http()
      .get('/v1/chains')
      .set(...bearer(KEYS.globex))
      .expect(200);
  });

  it('answers 503 SERVICE_UNAVAILABLE in the envelope, readiness 503, and writes nothing half-way', async () => {
    await post('before').expect(201);
    await cutOff(false);
    const results = await Promise.all([
      post('during-1'),
      post('during-2'),
      t
        .http()
        .get('/v1/events')
        .set(...bearer(KEYS.acme)),
    ]);
    for (const res of results) {
      expect(res.status).toBe(503);
      expect(res.body).toEqual({ error: { code: 'SERVICE_UNAVAILABLE', message: expect.any(String), details: {} } });
      expect(res.headers['retry-after']).toBeDefined();
      expect(JSON.stringify(res.body)).not.toMatch(/SELECT|INSERT|at .*\.js/);
    }
    const ready = await t.http().get('/health/ready').expect(503);
    expect(ready.body.error.code).toBe('SERVICE_UNAVAILABLE');
    await t.http().get('/health/live').expect(200);

    await cutOff(true);
    const after = await post('after').expect(201);
    expect(after.body.data.chain.position).toBe(2);
    const actors = await t.dataSource.query<{ actor: string }[]>(`SELECT actor FROM events ORDER BY position`);
    expect(actors.map((a) => a.actor)).toEqual(['before', 'after']);
  });
});

describe('when more events wait than APPEND_QUEUE_LIMIT', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ appendQueueLimit: 5, appendConcurrency: 1 });
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses the excess with 503 + Retry-After and keeps the chain intact', async () => {
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        t
          .http()
          .post('/v1/events')
          .set(...bearer(KEYS.acme))
          .send({ actor: `a${i}`, action: 'burst', chain: 'burst' }),
      ),
    );
    const created = results.filter((r) => r.status === 201);
    const refused = results.filter((r) => r.status === 503);
    expect(created.length + refused.length).toBe(60);
    expect(refused.length).toBeGreaterThan(0);
    refused.forEach((r) => {
      expect(r.body.error.code).toBe('SERVICE_UNAVAILABLE');
      expect(r.headers['retry-after']).toBe('1');
    });
    const positions = created.map((r) => r.body.data.chain.position).sort((a, b) => a - b);
    expect(positions).toEqual(Array.from({ length: created.length }, (_, i) => i + 1));
  });
});
