import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import type { OpenAPIObject } from '@nestjs/swagger';
import { ACCOUNT_ID } from '@app/common';
import { OpenApiCheck } from './support/openapi-check';
import { ADMIN_KEYS, adminBootstrapKeys } from './support/admin-keys';
import { bearer, checkedAgainst, KEYS, startTestApp, TestApp } from './support/test-app';

interface Header {
  required?: boolean;
  schema: Record<string, unknown>;
}
interface Response {
  content?: Record<string, { schema: Record<string, unknown> }>;
  headers?: Record<string, Header>;
}
interface Parameter {
  name: string;
  in: string;
  schema: Record<string, unknown>;
}
interface Operation {
  security?: Record<string, string[]>[];
  responses: Record<string, Response>;
  parameters?: Parameter[];
  tags?: string[];
  requestBody?: { content: Record<string, { schema: { $ref: string } }> };
}
interface Schema {
  properties: Record<string, Record<string, unknown>>;
  required?: string[];
  additionalProperties?: unknown;
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema>; securitySchemes: Record<string, Record<string, unknown>> };
  security?: Record<string, string[]>[];
  servers?: { url: string; description?: string }[];
  tags?: { name: string; description?: string }[];
}

/** The OpenAPI description is generated from the code; these tests hold it to what the service does. */
describe('OpenAPI description', () => {
  let t: TestApp;
  let doc: Document;
  const auth = () => bearer(KEYS.acme);

  beforeAll(async () => {
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys() });
    doc = (await t.http().get('/openapi.json').expect(200)).body as Document;
  });
  afterAll(async () => {
    await t.close();
  });

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ method, path, op })),
    );
  const schema = (name: string): Schema => doc.components.schemas[name]!;
  const sorted = (keys: Iterable<string>) => [...keys].sort();

  it('is public, OpenAPI 3, and describes every route the service has', () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(
      operations()
        .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
        .sort(),
    ).toEqual(
      [
        'GET /health/live',
        'GET /health/ready',
        'POST /v1/events',
        'POST /v1/events/batch',
        'GET /v1/events',
        'GET /v1/events/{id}',
        'GET /v1/events/{id}/proof',
        'GET /v1/events/export',
        'GET /v1/events/stream',
        'GET /v1/events/{id}/verify',
        'GET /v1/stats/events',
        'GET /v1/chains',
        'GET /v1/chain/{chainId}/status',
        'GET /v1/chain/{chainId}/checkpoint',
        'GET /v1/chain/{chainId}/consistency',
        'GET /v1/chain/{chainId}/verify',
        'GET /v1/checkpoint-key',
        'GET /v1/checkpoint-log',
        'GET /v1/witnesses',
        'GET /v1/chain/{chainId}/checkpoint/witnessed',
        'GET /v1/me',
        'GET /v1/accounts',
        'POST /v1/accounts',
        'GET /v1/accounts/{accountId}',
        'GET /v1/accounts/{accountId}/keys',
        'POST /v1/accounts/{accountId}/keys',
        'DELETE /v1/accounts/{accountId}/keys/{keyId}',
        'POST /v1/accounts/{accountId}/keys/{keyId}/rotate',
        'GET /v1/accounts/{accountId}/destinations',
        'POST /v1/accounts/{accountId}/destinations',
        'GET /v1/accounts/{accountId}/destinations/{destinationId}',
        'PATCH /v1/accounts/{accountId}/destinations/{destinationId}',
        'DELETE /v1/accounts/{accountId}/destinations/{destinationId}',
        'POST /v1/accounts/{accountId}/destinations/{destinationId}/pause',
        'POST /v1/accounts/{accountId}/destinations/{destinationId}/resume',
        'POST /v1/accounts/{accountId}/destinations/{destinationId}/replay',
        'POST /v1/accounts/{accountId}/destinations/{destinationId}/rotate-secret',
        'POST /v1/erasures',
        'GET /v1/erasures',
        'PUT /v1/chain/{chainId}/retention',
        'PUT /v1/chain/{chainId}/legal-hold',
        'PUT /v1/accounts/{accountId}/retention',
        'PUT /v1/accounts/{accountId}/legal-hold',
        'POST /v1/retention/sweep',
        'GET /v1/accounts/{accountId}/schemas',
        'GET /v1/accounts/{accountId}/schemas/{action}',
        'PUT /v1/accounts/{accountId}/schemas/{action}',
        'DELETE /v1/accounts/{accountId}/schemas/{action}',
        'GET /v1/accounts/{accountId}/schemas/{action}/versions/{n}',
        'POST /v1/accounts/{accountId}/schemas/{action}/preview',
      ].sort(),
    );
  });

  it('says which routes need a key exactly as the service enforces it', async () => {
    for (const { method, path, op } of operations()) {
      const url = path
        .replace('{id}', 'evt_01KAR2Y6T0F5M3Q8W9Z1B4C7D2')
        .replace('{chainId}', 'chn_01KAR2Y6T0F5M3Q8W9Z1B4C7D2')
        .replace('{accountId}', 'acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D2')
        .replace('{keyId}', 'key_01KAR2Y6T0F5M3Q8W9Z1B4C7D2');
      const res = await (method === 'post'
        ? t.http().post(url).send({})
        : method === 'delete'
          ? t.http().delete(url)
          : method === 'put'
            ? t.http().put(url).send({})
            : t.http().get(url));
      const secured = (op.security ?? []).some((requirement) => 'bearer' in requirement);
      expect({ route: `${method} ${path}`, unauthorized: res.status === 401 }).toEqual({
        route: `${method} ${path}`,
        unauthorized: secured,
      });
      if (secured) expect(op.responses['401']).toBeDefined();
    }
  });

  it('describes the request body and the response shapes the service really sends', async () => {
    const body = doc.paths['/v1/events']!.post!.requestBody!.content['application/json']!.schema.$ref;
    expect(body).toBe('#/components/schemas/CreateEventDto');
    expect(sorted(schema('CreateEventDto').required ?? [])).toEqual(['action', 'actor']);
    expect(sorted(Object.keys(schema('CreateEventDto').properties))).toEqual([
      'action',
      'actor',
      'chain',
      'context',
      'resource',
    ]);

    // Under an action schema, so that the event shows every member it can have (docs/contract.md §19).
    const { accountId } = (
      await t
        .http()
        .get('/v1/me')
        .set(...auth())
        .expect(200)
    ).body.data;
    await t
      .http()
      .put(`/v1/accounts/${accountId}/schemas/openapi.check`)
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .send({ schema: { type: 'object' }, mode: 'warn' })
      .expect(201);
    const event = (
      await t
        .http()
        .post('/v1/events')
        .set(...auth())
        .send({ actor: 'a', action: 'openapi.check', chain: 'openapi', context: { x: 1 } })
        .expect(201)
    ).body.data;
    const chainId = event.chain.id as string;
    const wire: Record<string, unknown> = {
      EventView: event,
      EventChainRef: event.chain,
      ChainView: (
        await t
          .http()
          .get(`/v1/chain/${chainId}/status`)
          .set(...auth())
          .expect(200)
      ).body.data,
      VerificationResultView: (
        await t
          .http()
          .get(`/v1/events/${event.id}/verify`)
          .set(...auth())
          .expect(200)
      ).body.data,
      ChainVerificationView: (
        await t
          .http()
          .get(`/v1/chain/${chainId}/verify`)
          .set(...auth())
          .expect(200)
      ).body.data,
      ErrorEnvelope: (await t.http().get(`/v1/chain/${chainId}/verify`).expect(401)).body,
    };
    for (const [name, sample] of Object.entries(wire)) {
      expect({ name, keys: sorted(Object.keys(schema(name).properties)) }).toEqual({
        name,
        keys: sorted(Object.keys(sample as object)),
      });
    }
    const error = (
      await t
        .http()
        .get('/v1/events?limit=0')
        .set(...auth())
        .expect(400)
    ).body.error;
    expect(sorted(Object.keys(schema('ErrorBody').properties))).toEqual(sorted(Object.keys(error)));
  });

  it('documents the limits the validation enforces', () => {
    const list = doc.paths['/v1/events']!.get as unknown as {
      parameters: { name: string; schema: { minimum?: number; maximum?: number } }[];
    };
    expect(list.parameters.find((p) => p.name === 'limit')!.schema).toMatchObject({ minimum: 1, maximum: 200 });
    expect(schema('CreateEventDto').properties.actor).toMatchObject({ maxLength: 256 });
  });

  const op = (method: string, path: string): Operation => doc.paths[path]![method]!;
  const param = (method: string, path: string, name: string): Parameter =>
    op(method, path).parameters!.find((p) => p.name === name)!;
  const ERROR_ENVELOPE = { $ref: '#/components/schemas/ErrorEnvelope' };

  it('documents accountId on the routes that read an account (an operator’s reads), with its pattern and 404, and on no other query', () => {
    const taking = operations().filter(({ op }) =>
      op.parameters?.some((p) => p.in === 'query' && p.name === 'accountId'),
    );
    expect(sorted(taking.map(({ method, path }) => `${method.toUpperCase()} ${path}`))).toEqual(
      sorted([
        'GET /v1/events',
        'GET /v1/events/export',
        'GET /v1/events/stream',
        'GET /v1/events/{id}',
        'GET /v1/events/{id}/verify',
        'GET /v1/events/{id}/proof',
        'GET /v1/stats/events',
        'GET /v1/chains',
        'GET /v1/chain/{chainId}/status',
        'GET /v1/chain/{chainId}/verify',
        'GET /v1/chain/{chainId}/consistency',
        'GET /v1/chain/{chainId}/checkpoint',
        'GET /v1/chain/{chainId}/checkpoint/witnessed',
        // Its own accountId (docs/contract.md §17): the account whose erasures are listed.
        'GET /v1/erasures',
      ]),
    );
    for (const { method, path, op: operation } of taking) {
      const accountId = param(method, path, 'accountId');
      expect({ path, schema: accountId.schema }).toEqual({
        path,
        schema: { type: 'string', pattern: ACCOUNT_ID.source },
      });
      expect({ path, notFound: operation.responses['404'] !== undefined }).toEqual({ path, notFound: true });
    }
  });

  it('passes Redocly’s recommended lint with no errors and no warnings (no network, no telemetry)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
    try {
      writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc));
      const lint = spawnSync(
        process.execPath,
        [require.resolve('@redocly/cli/bin/cli.js'), 'lint', '--format=json', join(dir, 'openapi.json')],
        {
          cwd: join(__dirname, '..'),
          encoding: 'utf8',
          env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true' },
        },
      );
      const report = JSON.parse(lint.stdout) as { totals: object; problems: { ruleId: string; message: string }[] };
      const problems = report.problems.map((p) => `${p.ruleId}: ${p.message}`);
      expect({ status: lint.status, totals: report.totals, problems }).toEqual({
        status: 0,
        totals: { errors: 0, warnings: 0, ignored: 0 },
        problems: [],
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('types numbers as integers, instants as date-times, and states the limits of filters and headers', () => {
    expect(param('get', '/v1/events', 'limit').schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 200 });
    expect(param('get', '/v1/chains', 'limit').schema).toMatchObject({ type: 'integer' });
    expect(schema('EventChainRef').properties.position).toMatchObject({ type: 'integer', minimum: 1 });
    expect(schema('ChainView').properties.lastPosition).toMatchObject({ type: 'integer' });
    expect(schema('ChainView').properties.eventCount).toMatchObject({ type: 'integer' });
    for (const name of ['checkedEvents', 'lastPosition', 'firstInvalidPosition', 'checkpointsChecked', 'errorCount']) {
      expect({ name, ...schema('ChainVerificationView').properties[name] }).toMatchObject({ name, type: 'integer' });
    }
    expect(schema('ChainVerificationError').properties.position).toMatchObject({ type: 'integer' });
    for (const path of ['/v1/events', '/v1/events/export']) {
      for (const name of ['after', 'before']) {
        expect({ path, name, ...param('get', path, name).schema }).toMatchObject({ format: 'date-time' });
      }
      for (const name of ['actor', 'action', 'resource']) {
        expect({ path, name, ...param('get', path, name).schema }).toMatchObject({ minLength: 1 });
      }
    }
    const key = param('post', '/v1/events', 'Idempotency-Key');
    expect(key).toMatchObject({ in: 'header', schema: { type: 'string', minLength: 1, maxLength: 255 } });
    const pattern = new RegExp(key.schema.pattern as string);
    expect(['k', 'a b', '~'.repeat(255)].every((k) => pattern.test(k))).toBe(true);
    expect([' a', 'é', 'a\tb', 'x'.repeat(256)].some((k) => pattern.test(k))).toBe(false);
  });

  it('describes the body of POST /v1/events as closed, with chain optional and its default in words', () => {
    const body = schema('CreateEventDto');
    expect(body.additionalProperties).toBe(false);
    expect(body.properties.chain).not.toHaveProperty('default');
    expect(body.properties.chain!.description).toContain('"default"');
    expect(body.required).not.toContain('chain');
  });

  it('describes every failure as the JSON envelope, with 500 everywhere and the statuses of the edge', () => {
    for (const { method, path, op: operation } of operations()) {
      const route = `${method} ${path}`;
      const statuses = Object.keys(operation.responses);
      const expected = operation.security?.length ? ['400', '401', '403', '429', '500', '503'] : ['400', '429', '500'];
      expect({ route, statuses }).toEqual({ route, statuses: expect.arrayContaining(expected) });
      for (const [status, response] of Object.entries(operation.responses)) {
        if (Number(status) < 400) continue;
        expect({ route, status, content: response.content }).toEqual({
          route,
          status,
          content: { 'application/json': { schema: ERROR_ENVELOPE } },
        });
      }
    }
    expect(op('get', '/health/ready').responses['503']).toBeDefined();
    expect(op('get', '/health/live').responses['200']!.content!['application/json']!.schema).toEqual({
      type: 'object',
      required: ['data'],
      properties: { data: { $ref: '#/components/schemas/HealthView' } },
    });
    expect(schema('HealthView').properties.status).toMatchObject({ enum: ['ok'] });
  });

  it('describes the export as CSV text or its JSON document, whose items have no createdAt', () => {
    const ok = op('get', '/v1/events/export').responses['200']!;
    expect(ok.content).toEqual({
      'text/csv': { schema: expect.objectContaining({ type: 'string' }) },
      'application/json': { schema: { $ref: '#/components/schemas/ExportDocumentView' } },
    });
    expect(schema('ExportDocumentView').required).toEqual(['export', 'data']);
    expect(schema('ExportDocumentView').properties.data!.items).toEqual({
      $ref: '#/components/schemas/ExportedEventView',
    });
    expect(sorted(Object.keys(schema('ExportMetadataView').properties))).toEqual(
      sorted(['format', 'generatedAt', 'period', 'filters', 'count', 'pruned', 'hashing']),
    );
    // `pruned` is there only when the export covers a chain that retention pruned (docs/contract.md §14),
    // `hashing` only when it holds version-2 events (§17), whose items keep the nine members.
    expect(sorted(schema('ExportMetadataView').required ?? [])).toEqual(
      sorted(['format', 'generatedAt', 'period', 'filters', 'count']),
    );
    expect(Object.keys(schema('ExportedEventView').properties)).toHaveLength(9);
    expect(Object.keys(schema('ExportedEventView').properties)).not.toContain('createdAt');
    expect(sorted(schema('ExportedEventView').required ?? [])).toEqual(
      sorted(Object.keys(schema('ExportedEventView').properties)),
    );
    for (const path of ['/v1/chain/{chainId}/checkpoint', '/v1/checkpoint-key']) {
      expect(op('get', path).responses['200']!.content).toEqual({ 'text/plain': { schema: { type: 'string' } } });
    }
  });

  it('documents the response headers', () => {
    for (const { method, path, op: operation } of operations()) {
      for (const [status, response] of Object.entries(operation.responses)) {
        const route = `${method} ${path} ${status}`;
        const headers = response.headers ?? {};
        expect({ route, id: headers['X-Request-Id']?.required }).toEqual({ route, id: true });
        // A 409 CONFLICT of the account and key routes (docs/contract.md §12) has no Retry-After: waiting does not help.
        // Nor an erasure's (matching events under legal hold, §17).
        const waitingHelps = !(status === '409' && (path.startsWith('/v1/accounts') || path === '/v1/erasures'));
        if (['409', '429', '503'].includes(status) && waitingHelps)
          expect({ route, ...headers['Retry-After'] }).toMatchObject({ route, required: true });
        if (status === '401')
          expect({ route, ...headers['WWW-Authenticate'] }).toMatchObject({ route, required: true });
      }
    }
    expect(op('post', '/v1/events').responses['201']!.headers!['Idempotent-Replayed']).toBeDefined();
    expect(op('get', '/v1/events/export').responses['200']!.headers!['Content-Disposition']).toMatchObject({
      required: true,
    });
  });

  it('has servers, described tags, public routes with security [], and a bearer scheme that is not a JWT', () => {
    expect(doc.servers!.length).toBeGreaterThan(0);
    const tags = new Map((doc.tags ?? []).map((tag) => [tag.name, tag.description]));
    for (const { method, path, op: operation } of operations()) {
      for (const tag of operation.tags ?? [])
        expect({ method, path, tag, described: !!tags.get(tag) }).toMatchObject({ described: true });
      expect({ method, path, security: Array.isArray(operation.security) }).toMatchObject({ security: true });
    }
    for (const path of ['/health/live', '/health/ready', '/v1/checkpoint-key'])
      expect(op('get', path).security).toEqual([]);
    expect(doc.components.securitySchemes.bearer).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
    expect(doc.components.securitySchemes.bearer).not.toHaveProperty('bearerFormat');
  });

  describe('the check every e2e response goes through', () => {
    const doctored = (change: (d: Document) => void): OpenApiCheck => {
      const copy = JSON.parse(JSON.stringify(doc)) as Document;
      change(copy);
      return new OpenApiCheck(copy as unknown as OpenAPIObject);
    };
    const agent = (check: OpenApiCheck) => checkedAgainst(check, request(t.app.getHttpServer()));
    const unknownEvent = '/v1/events/evt_01KAR2Y6T0F5M3Q8W9Z1B4C7D2';

    it('passes what the service answers', async () => {
      await agent(new OpenApiCheck(doc as unknown as OpenAPIObject))
        .get(unknownEvent)
        .set(...auth())
        .expect(404);
    });

    it('fails a request whose status the operation does not list', async () => {
      const check = doctored((d) => delete d.paths['/v1/events/{id}']!.get!.responses['404']);
      await expect(
        agent(check)
          .get(unknownEvent)
          .set(...auth()),
      ).rejects.toThrow(/GET \/v1\/events\/\{id\} does not list status 404/);
    });

    it('fails a body that does not match, a member the schema does not name, and a wrong Content-Type', async () => {
      const noCode = doctored(
        (d) => (d.components.schemas.ErrorBody!.required = ['code', 'message', 'details', 'hint']),
      );
      await expect(
        agent(noCode)
          .get(unknownEvent)
          .set(...auth()),
      ).rejects.toThrow(/does not match the OpenAPI description/);
      const fewer = doctored((d) => delete d.components.schemas.ErrorBody!.properties.details);
      await expect(
        agent(fewer)
          .get(unknownEvent)
          .set(...auth()),
      ).rejects.toThrow(/must NOT have additional properties/);
      const text = doctored((d) => {
        const response = d.paths['/v1/checkpoint-key']!.get!.responses['200']!;
        response.content = { 'application/json': response.content!['text/plain']! };
      });
      await expect(agent(text).get('/v1/checkpoint-key')).rejects.toThrow(
        /Content-Type "text\/plain" is not described/,
      );
    });

    it('fails a response without a required header, or with a header that does not match', async () => {
      const missing = doctored(
        (d) => (d.paths['/v1/events/{id}']!.get!.responses['404']!.headers!['X-Nope'] = { required: true, schema: {} }),
      );
      await expect(
        agent(missing)
          .get(unknownEvent)
          .set(...auth()),
      ).rejects.toThrow(/required header X-Nope is missing/);
      const wrong = doctored(
        (d) =>
          (d.paths['/v1/events/{id}']!.get!.responses['404']!.headers!['X-Request-Id']!.schema = { type: 'integer' }),
      );
      await expect(
        agent(wrong)
          .get(unknownEvent)
          .set(...auth()),
      ).rejects.toThrow(/header X-Request-Id/);
    });
  });

  it('serves a browsable UI from local files that calls no outside host', async () => {
    const page = await t.http().get('/docs/').expect(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const init = await t.http().get('/docs/swagger-ui-init.js').expect(200);
    expect(init.text).toContain('"validatorUrl": null');
    // Only the SVG/XLink namespace names, which no browser fetches.
    expect(`${page.text}${init.text}`).not.toMatch(/https?:\/\/(?!www\.w3\.org\/)[a-z]/i);
  });
});

describe('/docs under a Content-Security-Policy (issue 26 item 10)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t?.close();
  });

  it.each(['/docs', '/docs/', '/docs/index.html', '/docs/swagger-ui-init.js', '/docs/swagger-ui-bundle.js'])(
    '%s: this origin only, no inline script, no framing',
    async (path) => {
      const res = await t.http().get(path).expect(200);
      const csp = String(res.headers['content-security-policy']);
      const directives = new Map(
        csp.split(';').map((d) => {
          const [name, ...sources] = d.trim().split(/\s+/);
          return [name!, sources];
        }),
      );
      expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
      expect(directives.get('default-src')).toEqual(["'self'"]);
      expect(directives.get('script-src')).toEqual(["'self'"]);
      expect(directives.get('object-src')).toEqual(["'none'"]);
      // Inline styles by hash only: never 'unsafe-inline', never another origin.
      expect(
        directives.get('style-src')?.every((s) => /^'(self|unsafe-hashes|sha256-[A-Za-z0-9+/]+=*)'$/.test(s)),
      ).toBe(true);
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
    },
  );
});
