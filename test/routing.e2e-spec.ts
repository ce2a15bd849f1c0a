import { Module, Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import { AppModule } from '../apps/api/src/app.module';
import { EventsModule } from '../apps/api/src/events/events.module';
import { ExportModule } from '../apps/api/src/export/export.module';
import { VerificationModule } from '../apps/api/src/verification/verification.module';
import request from 'supertest';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/** AppModule with its imports in another order: routing must not depend on it (issue 9 item 4). */
function appModuleWithImports(order: (imports: Type[]) => Type[]): Type {
  const imports = Reflect.getMetadata(MODULE_METADATA.IMPORTS, AppModule) as Type[];
  const providers = Reflect.getMetadata(MODULE_METADATA.PROVIDERS, AppModule) as unknown[];
  @Module({ imports: order(imports), providers: providers as never[] })
  class ReorderedAppModule {}
  return ReorderedAppModule;
}

describe.each([
  ['as declared', (imports: Type[]) => imports],
  ['reversed', (imports: Type[]) => [...imports].reverse()],
  [
    'events before export and verification',
    (imports: Type[]) => [
      ...imports.filter((m) => ![ExportModule, VerificationModule].includes(m)),
      VerificationModule,
      ExportModule,
    ],
  ],
])('Routing with AppModule imports %s', (_name, order) => {
  let t: TestApp;
  let eventId: string;
  const get = (path: string) =>
    t
      .http()
      .get(path)
      .set(...bearer(KEYS.acme));

  beforeAll(async () => {
    t = await startTestApp({}, undefined, appModuleWithImports(order));
    const res = await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .send({ actor: 'a', action: 'b' })
      .expect(201);
    eventId = res.body.data.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  it('EventsModule really comes first in the reordered cases', () => {
    const imports = Reflect.getMetadata(MODULE_METADATA.IMPORTS, appModuleWithImports(order)) as Type[];
    expect(imports).toContain(EventsModule);
  });

  it('GET /v1/events/export is the export', async () => {
    const res = await get(
      '/v1/events/export?format=json&after=2000-01-01T00:00:00Z&before=2100-01-01T00:00:00Z',
    ).expect(200);
    expect(res.body.export).toMatchObject({ format: 'json', count: 1 });
    expect(res.headers['content-disposition']).toContain('attachment');
  });

  it('GET /v1/events/:id and /v1/events/:id/verify are the event and its verification', async () => {
    expect((await get(`/v1/events/${eventId}`).expect(200)).body.data.id).toBe(eventId);
    expect((await get(`/v1/events/${eventId}/verify`).expect(200)).body.data.valid).toBe(true);
  });

  it('a malformed or unknown event id is still a 404 NOT_FOUND', async () => {
    for (const id of ['not-an-id', 'evt_01ARZ3NDEKTSV4RRFFQ69G5FAV']) {
      const res = await get(`/v1/events/${id}`).expect(404);
      expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String), details: {} } });
    }
  });
});

const expectUnauthorized = (res: { status: number; headers: Record<string, string>; body: unknown }) => {
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toBe('Bearer');
  expect(res.body).toEqual({ error: { code: 'UNAUTHORIZED', message: expect.any(String), details: {} } });
};

describe('Authentication comes before routing under /v1/; a method a path does not serve is 405 (contract §5, §8)', () => {
  let t: TestApp;
  let eventId: string;
  let chainId: string;

  beforeAll(async () => {
    t = await startTestApp();
    const res = await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .send({ actor: 'a', action: 'b' })
      .expect(201);
    eventId = res.body.data.id;
    chainId = res.body.data.chain.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const paths = () => [
    '/v1/events/not-an-event-id',
    `/v1/events/${chainId}/verify`,
    `/v1/events/${chainId}/proof`,
    '/v1/nowhere',
    '/V1/EVENTS/not-an-event-id',
    '/v1',
  ];

  it('without a valid key, a path under /v1/ that no route takes is 401, whatever it looks like', async () => {
    for (const path of paths()) {
      expectUnauthorized(await t.http().get(path));
      expectUnauthorized(
        await t
          .http()
          .get(path)
          .set(...bearer('ats_not-a-key-of-anyone-0123456789')),
      );
      expectUnauthorized(await t.http().delete(path));
    }
  });

  it('with a valid key, the same paths are 404 NOT_FOUND, and a key is still refused 401 on them', async () => {
    for (const path of paths()) {
      const res = await t
        .http()
        .get(path)
        .set(...bearer(KEYS.acme))
        .expect(404);
      expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String), details: {} } });
    }
  });

  it.each([
    ['DELETE', '/v1/events', 'GET, HEAD, POST'],
    ['PUT', '/v1/events/batch', 'POST'],
    ['POST', '/v1/events/{event}', 'GET, HEAD'],
    ['PATCH', '/v1/events/{event}/verify', 'GET, HEAD'],
    ['POST', '/v1/events/export', 'GET, HEAD'],
    ['DELETE', '/v1/chain/{chain}/status', 'GET, HEAD'],
    ['GET', '/v1/accounts/acc_01ARZ3NDEKTSV4RRFFQ69G5FAV/keys/key_01ARZ3NDEKTSV4RRFFQ69G5FAV', 'DELETE'],
    ['OPTIONS', '/v1/chains', 'GET, HEAD'],
    ['HEAD', '/v1/retention/sweep', 'POST'],
  ])('%s %s with a valid key is 405 METHOD_NOT_ALLOWED with Allow: %s; without one, 401', async (method, at, allow) => {
    const path = at.replace('{event}', eventId).replace('{chain}', chainId);
    // HEAD: with no body to check, not through the OpenAPI check (it reads an error's body).
    const agent = method === 'HEAD' ? request(t.app.getHttpServer()) : t.http();
    const send = () => agent[method.toLowerCase() as 'get'](path);
    const res = await send().set(...bearer(KEYS.acme));
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe(allow);
    if (method !== 'HEAD') {
      expect(res.body).toEqual({
        error: {
          code: 'METHOD_NOT_ALLOWED',
          message: expect.any(String),
          details: { allowedMethods: allow.split(', ') },
        },
      });
    }
    const refused = await send();
    expect(refused.status).toBe(401);
    expect(refused.headers.allow).toBeUndefined();
  });

  it('a public path answers 405 with Allow without a key; an unknown path outside /v1/ stays a 404 without one', async () => {
    for (const [method, path] of [
      ['post', '/health/live'],
      ['delete', '/health/ready'],
      ['post', '/openapi.json'],
      ['put', '/docs'],
    ] as const) {
      const res = await t.http()[method](path).expect(405);
      expect(res.headers.allow).toBe('GET, HEAD');
      expect(res.body.error.code).toBe('METHOD_NOT_ALLOWED');
    }
    const res = await t.http().get('/nowhere').expect(404);
    expect(res.body.error.code).toBe('NOT_FOUND');
  });

  it('a served method still answers (GET and HEAD of the same paths)', async () => {
    await t
      .http()
      .get(`/v1/events/${eventId}`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    await t
      .http()
      .head('/v1/chains')
      .set(...bearer(KEYS.acme))
      .expect(200);
  });
});
