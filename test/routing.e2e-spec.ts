import { Module, Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import { AppModule } from '../apps/api/src/app.module';
import { EventsModule } from '../apps/api/src/events/events.module';
import { ExportModule } from '../apps/api/src/export/export.module';
import { VerificationModule } from '../apps/api/src/verification/verification.module';
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
