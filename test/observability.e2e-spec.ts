import { createServer } from 'node:net';
import request from 'supertest';
import { CapturedLogs, capturingLogs } from './support/captured-logs';
import { attemptSql } from './support/raw-sql';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/** docs/contract.md §11: metrics on their own listener, JSON log lines, request ids, TRUST_PROXY. */

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A request's line is written when its response has ended, after the client may have read it: wait a moment. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

async function startObserved(
  overrides: Parameters<typeof startTestApp>[0] = {},
): Promise<{ t: TestApp; logs: CapturedLogs }> {
  const logs = new CapturedLogs();
  const t = await startTestApp({ logLevel: 'info', ...overrides }, undefined, undefined, capturingLogs(logs));
  return { t, logs };
}

describe('metrics (GET /metrics on METRICS_PORT)', () => {
  let t: TestApp;
  let port: number;
  const actor = 'actor-never-a-label-7f3a';
  const chain = 'chain-never-a-label-7f3a';
  let eventId: string;
  let chainId: string;
  let text: string;

  beforeAll(async () => {
    port = await freePort();
    ({ t } = await startObserved({ metricsPort: port, logLevel: 'silent' }));
    const created = await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .send({ actor, action: 'user.login', chain })
      .expect(201);
    eventId = created.body.data.id;
    chainId = created.body.data.chain.id;
    await t
      .http()
      .get(`/v1/events/evt_01ARZ3NDEKTSV4RRFFQ69G5FAV`)
      .set(...bearer(KEYS.acme))
      .expect(404);
    await t
      .http()
      .get('/v1/events/not-an-event-id')
      .set(...bearer(KEYS.acme))
      .expect(404);
    await t.http().get(`/v1/events/${eventId}`).expect(401);
    await t
      .http()
      .get(`/v1/events/${eventId}`)
      .set(...bearer('wrong-key-0123456789abcdef'))
      .expect(401);
    await t
      .http()
      .get(`/v1/chain/${chainId}/verify`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    await t
      .http()
      .get(`/v1/events/${eventId}/verify`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    await t
      .http()
      .get(`/v1/chain/${chainId}/checkpoint`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    const res = await fetch(`http://127.0.0.1:${port}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    text = await res.text();
  });
  afterAll(async () => {
    await t?.close();
  });

  it('has the metric set of §11, Node.js process defaults included', () => {
    for (const name of [
      'http_requests_total',
      'http_request_duration_seconds',
      'audit_events_appended_total',
      'audit_append_transaction_events',
      'audit_append_commit_duration_seconds',
      'audit_append_queue_events',
      'audit_append_queue_bytes',
      'audit_chain_verifications_total',
      'audit_verified_events_total',
      'audit_checkpoints_signed_total',
      'audit_db_pool_connections',
      'audit_auth_failures_total',
      'audit_rate_limited_total',
      'process_cpu_seconds_total',
      'nodejs_eventloop_lag_seconds',
    ]) {
      expect(text).toMatch(new RegExp(`^# TYPE ${name} `, 'm'));
    }
  });

  it('counts what happened, by route template', () => {
    const value = (series: string) => {
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? undefined : Number(line.slice(series.length + 1));
    };
    expect(value('http_requests_total{method="POST",route="/v1/events",status="201"}')).toBe(1);
    expect(value('http_requests_total{method="GET",route="/v1/events/:id",status="404"}')).toBe(1);
    expect(value('http_requests_total{method="GET",route="/v1/events/:id",status="401"}')).toBe(2);
    expect(value('http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
    expect(value('http_request_duration_seconds_count{method="POST",route="/v1/events"}')).toBe(1);
    expect(value('audit_events_appended_total')).toBe(1);
    expect(value('audit_append_transaction_events_count')).toBe(1);
    expect(value('audit_append_commit_duration_seconds_count')).toBe(1);
    expect(value('audit_append_queue_events')).toBe(0);
    expect(value('audit_chain_verifications_total{result="valid"}')).toBe(1);
    expect(value('audit_verified_events_total')).toBe(2);
    expect(value('audit_checkpoints_signed_total')).toBe(1);
    expect(value('audit_auth_failures_total')).toBe(2);
    expect(value('audit_rate_limited_total')).toBe(0);
    expect(value('audit_db_pool_connections{state="waiting"}')).toBe(0);
    expect(value('audit_db_pool_connections{state="idle"}')).toBeGreaterThanOrEqual(1);
  });

  it('puts no id, account, actor, chain name or path in any label', () => {
    const labelValues = [...text.matchAll(/="([^"]*)"/g)].map((m) => m[1]!);
    expect(labelValues.length).toBeGreaterThan(0);
    for (const value of labelValues) {
      expect(value).not.toMatch(/evt_|acc_|chn_|key_|not-an-event-id|never-a-label|acme|globex/);
      expect(value.startsWith('/') ? value : '/').toMatch(/^\/[a-z0-9/:.-]*$/i);
    }
    expect(text).not.toContain(eventId);
  });

  it('never answers on the API port', async () => {
    const res = await t.http().get('/metrics').expect(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });

  it('answers nothing but GET /metrics on its own port', async () => {
    expect((await fetch(`http://127.0.0.1:${port}/v1/events`)).status).toBe(404);
  });
});

describe('JSON logs', () => {
  let t: TestApp;
  let logs: CapturedLogs;
  const queryValue = 'query-value-never-logged-51c2';
  const bodyValue = 'body-value-never-logged-51c2';

  beforeAll(async () => {
    ({ t, logs } = await startObserved());
  });
  afterAll(async () => {
    await t?.close();
  });

  it('writes Nest’s own start-up lines as JSON', () => {
    const started = logs.entries().find((e) => e.msg === 'Nest application successfully started');
    expect(started).toMatchObject({ level: 'info', context: 'NestApplication' });
  });

  it('logs a 405 with the route template and the account that asked; a /v1/ path without a key as a 401 of no route', async () => {
    await t
      .http()
      .delete('/v1/events')
      .set(...bearer(KEYS.acme))
      .set('X-Request-Id', 'obs-405')
      .expect(405);
    await t.http().get('/v1/events/not-an-event-id').set('X-Request-Id', 'obs-401').expect(401);
    await settle();
    expect(logs.requestLines('obs-405')).toEqual([
      expect.objectContaining({
        level: 'info',
        method: 'DELETE',
        route: '/v1/events',
        status: 405,
        accountId: expect.stringMatching(/^acc_/),
      }),
    ]);
    expect(logs.requestLines('obs-401')).toEqual([
      expect.objectContaining({ level: 'info', method: 'GET', route: 'unmatched', status: 401 }),
    ]);
  });

  it('writes one line per request with its fields, and never the key, the body or the query string', async () => {
    const reqId = 'obs-test.1:A_b-2';
    const created = await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .set('X-Request-Id', reqId)
      .set('User-Agent', 'agent-header-never-logged')
      .send({ actor: bodyValue, action: 'user.login', context: { note: bodyValue } })
      .expect(201);
    await t
      .http()
      .get(`/v1/events?actor=${queryValue}`)
      .set(...bearer(KEYS.acme))
      .set('X-Request-Id', 'obs-test.2')
      .expect(200);
    await t
      .http()
      .get(`/v1/events/${created.body.data.id}`)
      .set(...bearer(`${KEYS.globex}x`))
      .set('X-Request-Id', 'obs-test.3')
      .expect(401);
    await settle();

    for (const entry of logs.entries()) {
      expect(typeof entry.msg).toBe('string');
      expect(entry.level).toMatch(/^(fatal|error|warn|info|debug|trace)$/);
      expect(entry.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    const [line, ...more] = logs.requestLines(reqId);
    expect(more).toEqual([]);
    expect(line).toEqual({
      time: expect.any(String),
      level: 'info',
      msg: 'request completed',
      reqId,
      method: 'POST',
      route: '/v1/events',
      status: 201,
      durationMs: expect.any(Number),
      accountId: expect.stringMatching(/^acc_/),
      clientAddress: expect.stringMatching(/127\.0\.0\.1$/),
    });
    expect(logs.requestLines('obs-test.2')[0]).toMatchObject({ route: '/v1/events', status: 200 });
    const refused = logs.requestLines('obs-test.3')[0];
    expect(refused).toMatchObject({ route: '/v1/events/:id', status: 401 });
    expect(refused).not.toHaveProperty('accountId');

    for (const secret of [KEYS.acme, KEYS.acme.slice(0, 8), KEYS.globex.slice(0, 8), 'Bearer', queryValue, bodyValue]) {
      expect(logs.text).not.toContain(secret);
    }
    expect(logs.text).not.toContain('agent-header-never-logged');
    expect(logs.text).not.toContain(created.body.data.id); // the path's ids: the route template instead
  });

  it('generates a request id for a request without a sane one, and logs it', async () => {
    const res = await t.http().get('/health/live').set('X-Request-Id', 'bad id with spaces').expect(200);
    const reqId = res.headers['x-request-id'] as string;
    expect(reqId).toMatch(/^[0-9a-f-]{36}$/);
    await settle();
    expect(logs.requestLines(reqId)[0]).toMatchObject({ route: '/health/live', status: 200 });
    expect(logs.text).not.toContain('bad id with spaces');
  });

  it('a 500 names its request id in details, and every line of it carries that id', async () => {
    const created = await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .send({ actor: 'a', action: 'b' })
      .expect(201);
    const chainId = created.body.data.chain.id as string;
    const broken = await attemptSql(t.dataSource, (sql) =>
      sql.query('ALTER TABLE checkpoints RENAME TO checkpoints_away'),
    );
    expect(broken).toBeNull();
    const reqId = 'obs-test.500';
    try {
      const res = await request(t.app.getHttpServer())
        .get(`/v1/chain/${chainId}/checkpoint`)
        .set(...bearer(KEYS.acme))
        .set('X-Request-Id', reqId)
        .expect(500);
      expect(res.body.error).toEqual({
        code: 'INTERNAL_ERROR',
        message: 'An internal error occurred.',
        details: { requestId: reqId },
      });
      expect(JSON.stringify(res.body)).not.toMatch(/checkpoints|SELECT|at /);
    } finally {
      expect(
        await attemptSql(t.dataSource, (sql) => sql.query('ALTER TABLE checkpoints_away RENAME TO checkpoints')),
      ).toBeNull();
    }
    // Nothing else prints the failed statement and its parameters as text (TypeORM's own logger did).
    expect(t.dataSource.options.logging).toBe(false);
    await settle();
    const lines = logs.entries().filter((e) => e.reqId === reqId);
    const failure = lines.find((e) => e.context === 'Errors');
    expect(failure).toMatchObject({
      level: 'error',
      route: '/v1/chain/:chainId/checkpoint',
      err: { type: expect.any(String), message: expect.any(String), stack: expect.any(String) },
    });
    // The driver's SQL and parameters stay out (case-sensitive: the stack names functions such as selectRows).
    expect(JSON.stringify(failure)).not.toMatch(/\bSELECT\b|\bFROM\b|parameters/);
    expect(lines.find((e) => e.msg === 'request failed')).toMatchObject({ level: 'error', status: 500 });
  });
});

describe('TRUST_PROXY', () => {
  /** Two refused keys from one client address a minute: the third gets 429. */
  async function refusedFrom(t: TestApp, forwardedFor: string, status: number, reqId: string): Promise<void> {
    await t
      .http()
      .get('/v1/events')
      .set(...bearer('not-a-valid-key-0123456789'))
      .set('X-Forwarded-For', forwardedFor)
      .set('X-Request-Id', reqId)
      .expect(status);
  }

  it('set: the refused-key limit and the logs take the client address from X-Forwarded-For', async () => {
    const metricsPort = await freePort();
    const { t, logs } = await startObserved({ authFailuresPerMinute: 2, trustProxy: ['loopback'], metricsPort });
    try {
      await refusedFrom(t, '203.0.113.7', 401, 'tp-1');
      await refusedFrom(t, '203.0.113.7', 401, 'tp-2');
      await refusedFrom(t, '203.0.113.7', 429, 'tp-3');
      await refusedFrom(t, '203.0.113.8', 401, 'tp-4'); // another client behind the same proxy
      await settle();
      expect(logs.requestLines('tp-1')[0]).toMatchObject({ clientAddress: '203.0.113.7', status: 401 });
      expect(logs.requestLines('tp-4')[0]).toMatchObject({ clientAddress: '203.0.113.8', status: 401 });
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(text).toMatch(/^audit_auth_failures_total 3$/m);
      expect(text).toMatch(/^audit_rate_limited_total 1$/m);
    } finally {
      await t.close();
    }
  });

  it('unset: X-Forwarded-For is ignored, the TCP peer is the client', async () => {
    const { t, logs } = await startObserved({ authFailuresPerMinute: 2 });
    try {
      await refusedFrom(t, '203.0.113.7', 401, 'tp-5');
      await refusedFrom(t, '203.0.113.8', 401, 'tp-6');
      await refusedFrom(t, '203.0.113.9', 429, 'tp-7');
      await settle();
      expect(logs.requestLines('tp-5')[0]).toMatchObject({ clientAddress: expect.stringMatching(/127\.0\.0\.1$/) });
      expect(logs.text).not.toContain('203.0.113');
    } finally {
      await t.close();
    }
  });
});
