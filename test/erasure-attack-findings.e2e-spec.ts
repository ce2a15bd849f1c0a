import { randomBytes } from 'node:crypto';
import { erase } from '@app/hashing';
import { AppModule } from '../apps/api/src/app.module';
import type { EventView } from '../apps/api/src/events/dto/event.view';
import { ADMIN_KEYS, adminBootstrapKeys, rowsContaining } from './support/admin-keys';
import { attemptSql } from './support/raw-sql';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/**
 * Findings of the erasure attack review (issue 37, ../shared/docs/threat-model.md attacks 1, 2, 6):
 * each test failed before its fix and states what the contract (docs/contract.md §17, P2, P3, P10) wants.
 */
describe('erasure attack findings', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys() }, undefined, AppModule);
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, key: string = ADMIN_KEYS.acmeAdmin) =>
    t
      .http()
      .get(path)
      .set(...bearer(key));
  const append = async (body: object): Promise<EventView> =>
    (
      await t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send(body)
        .expect(201)
    ).body.data as EventView;
  const erasure = (body: object, key: string = ADMIN_KEYS.acmeAdmin) =>
    t
      .http()
      .post('/v1/erasures')
      .set(...bearer(key))
      .send(body);
  const audit = async (): Promise<EventView[]> =>
    (await get(`/v1/events?limit=200&q=${encodeURIComponent('chain:_audit')}`, KEYS.acme).expect(200)).body
      .data as EventView[];

  it('P3: a tenant cannot erase `_audit` members by erasing a decoy event that holds the same values', async () => {
    const accountId = (await get('/v1/me').expect(200)).body.data.accountId as string;
    const name = `backdoor-${randomBytes(3).toString('hex')}`;
    await t
      .http()
      .post(`/v1/accounts/${accountId}/keys`)
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .send({ name, scopes: ['admin'] })
      .expect(201);
    await append({ actor: 'decoy@example.com', action: 'decoy.x', context: { a: name, b: 'admin' }, chain: 'decoy' });
    await erasure({ q: 'action:decoy.x', fields: ['context.*'], reason: 'decoy' }).expect(200);
    const created = (await audit()).find((e) => e.action === 'key.created' && e.erased?.length)?.context ?? null;
    // The key's creation must still say which key, with which scopes.
    expect(created).toBeNull();
  });

  it('P10: an erasure whose reason names a value it erases is refused (the reason is kept for good), and nothing keeps the value', async () => {
    const email = `rea-${randomBytes(3).toString('hex')}@example.com`;
    await append({ actor: email, action: 'reason.x', chain: 'reason' });
    const refused = (
      await erasure({ q: `actor:"${email}"`, fields: ['actor'], reason: `GDPR request of ${email}` }).expect(400)
    ).body.error;
    expect(refused.details.fields).toEqual([{ field: 'reason', message: expect.stringMatching(/must not contain/) }]);
    await erasure({ q: `actor:"${email}"`, fields: ['actor'], reason: 'GDPR request #4711' }).expect(200);
    expect(await rowsContaining((sql, params) => t.dataSource.query(sql, params), email)).toEqual([]);
  });

  it('P10: a value with a backslash or a double quote, quoted in an export’s q, stays in `_audit`', async () => {
    const tag = randomBytes(3).toString('hex');
    const value = `CORP\\zed${tag}`;
    await append({ actor: value, action: 'bs.x', chain: 'bs' });
    const q = `actor:"${value.replace(/\\/g, '\\\\')}"`;
    await get(
      `/v1/events/export?format=json&after=2000-01-01T00:00:00.000Z&before=2100-01-01T00:00:00.000Z&q=${encodeURIComponent(q)}`,
      KEYS.acme,
    ).expect(200);
    await erasure({ q: 'action:bs.x', fields: ['actor'], reason: 'r' }).expect(200);
    expect((await audit()).filter((e) => JSON.stringify(e.context).includes(`zed${tag}`))).toEqual([]);
  });

  it('P2: audit_erase_events cannot remove a context member without the database’s record (commitments.context not an object)', async () => {
    const e = await append({
      actor: 'arr@example.com',
      action: 'arr.x',
      context: { secret: 'hide-me', keep: 'k' },
      chain: 'arr',
    });
    const accountId = (await get('/v1/me').expect(200)).body.data.accountId as string;
    const { event, hashing } = erase({ ...e, chainId: e.chain.id, position: e.chain.position }, e.hashing!, [
      'context.secret',
    ]);
    const row = {
      id: e.id,
      actor: false,
      resource: false,
      context: event.context,
      erasure: { ...hashing, commitments: { ...hashing.commitments, context: ['secret'] } },
    };
    const refused = await attemptSql(t.dataSource, (m) =>
      m.query(`SELECT audit_erase_events($1, $2::jsonb)`, [accountId, JSON.stringify([row])]),
    );
    expect(refused).not.toBeNull();
  });
});
