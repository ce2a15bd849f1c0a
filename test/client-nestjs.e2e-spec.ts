import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import request from 'supertest';
import { AuditTrailClient, Recorder } from '@audit-trail/client';
import { principalActor } from '@audit-trail/client/nestjs';
import { clientOf, listening } from './support/client-app';
import { KEYS, startTestApp, TestApp } from './support/test-app';

/*
 * docs/contract.md §20 and issue 38 item 5: the example application (examples/nestjs-app) records through
 * AuditTrailModule and @Audited against the real service: an event per successful marked request,
 * the actor from the request's principal, resource and context from the options; nothing for a
 * request that fails; the recorder closed with the application.
 */
describe('AuditTrailModule and @Audited (examples/nestjs-app)', () => {
  let service: TestApp;
  let client: AuditTrailClient;
  let app: INestApplication;
  const spool = mkdtempSync(join(tmpdir(), 'client-nestjs-'));

  beforeAll(async () => {
    service = await startTestApp();
    const url = await listening(service);
    client = clientOf(url);
    // The example reads its settings from the environment when its module is loaded.
    Object.assign(process.env, { AUDIT_TRAIL_URL: url, AUDIT_TRAIL_KEY: KEYS.acme, AUDIT_TRAIL_SPOOL: spool });
    const { AppModule } = await import('../examples/nestjs-app/src/app.module');
    const moduleRef = await Test.createTestingModule({ imports: [AppModule] }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
  });
  afterAll(async () => {
    await app?.close();
    await service?.close();
    rmSync(spool, { recursive: true, force: true });
  });

  it('records an event for each successful request, the actor from the principal', async () => {
    await request(app.getHttpServer()).post('/invoices/42/approve').set('X-User', 'alice').expect(201);
    await request(app.getHttpServer()).post('/invoices/43/approve').set('X-User', 'bob').expect(201);
    await request(app.getHttpServer()).post('/invoices/44/reject').set('X-User', 'carol').expect(400);
    await request(app.getHttpServer()).post('/invoices/45/approve').expect(401);
    await app.get(Recorder).flush();
    const events = [];
    for await (const e of client.events.list({ q: 'action:invoice.*' })) events.push(e);
    expect(
      events.map((e) => ({
        actor: e.actor,
        action: e.action,
        resource: e.resource,
        context: e.context,
        chain: e.chain.name,
      })),
    ).toEqual([
      {
        actor: 'bob',
        action: 'invoice.approve',
        resource: 'invoice:43',
        context: { status: 'approved' },
        chain: 'billing',
      },
      {
        actor: 'alice',
        action: 'invoice.approve',
        resource: 'invoice:42',
        context: { status: 'approved' },
        chain: 'billing',
      },
    ]);
    expect(app.get(Recorder).counters).toMatchObject({ sent: 2, rejected: 0 });
  });

  it('takes the actor from the usual shapes of a principal', () => {
    expect(principalActor({ user: { id: 7 } })).toBe('7');
    expect(principalActor({ user: { sub: 'auth0|123' } })).toBe('auth0|123');
    expect(principalActor({ user: { email: 'a@example.com' } })).toBe('a@example.com');
    expect(principalActor({ user: 'svc-batch' })).toBe('svc-batch');
    expect(principalActor({})).toBe('anonymous');
  });

  it('closes the recorder with the application', async () => {
    const recorder = app.get(Recorder);
    await app.close();
    await expect(recorder.record({ actor: 'x', action: 'after.close' })).rejects.toThrow(/closed/);
  });
});
