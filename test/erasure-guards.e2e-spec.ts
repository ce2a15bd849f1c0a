import { randomBytes } from 'node:crypto';
import { AppModule } from '../apps/api/src/app.module';
import type { EventView } from '../apps/api/src/events/dto/event.view';
import { ADMIN_KEYS, adminBootstrapKeys, rowsContaining } from './support/admin-keys';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/**
 * What an erasure must never do (docs/contract.md §17, issue 37; ../shared/docs/threat-model.md P3,
 * P5, P10): touch `_audit` through a tenant's key, leave an erased value quoted in `_audit`, match
 * everything, record an erasure of nothing, or act on a key revoked a moment ago.
 */
describe('erasure guards', () => {
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
  const erase = (body: object, key: string = ADMIN_KEYS.acmeAdmin) =>
    t
      .http()
      .post('/v1/erasures')
      .set(...bearer(key))
      .send(body);
  const acmeId = async (): Promise<string> => (await get('/v1/me').expect(200)).body.data.accountId as string;
  const erasureCount = async (): Promise<number> =>
    (await get('/v1/erasures?limit=200').expect(200)).body.data.length as number;
  const auditEntries = async (): Promise<EventView[]> =>
    (await get(`/v1/events?limit=200&q=${encodeURIComponent('chain:_audit')}`, KEYS.acme).expect(200)).body
      .data as EventView[];

  it('keeps `_audit` out of a tenant’s reach (P3): 422 naming it, nothing erased; an operator may, recorded in system’s `_audit` too', async () => {
    await t
      .http()
      .post(`/v1/accounts/${await acmeId()}/keys`)
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .send({ name: 'to-hide', scopes: ['read'] })
      .expect(201);
    const q = 'chain:_audit action:key.created';
    const before = await erasureCount();
    for (const body of [
      { q, fields: ['actor'], reason: 'hide it' },
      { q: 'action:key.created', fields: ['actor', 'context.*'], reason: 'hide it' },
    ]) {
      const refused = (await erase(body).expect(422)).body.error;
      expect(refused).toMatchObject({ code: 'NOT_ERASABLE', details: { reserved: '_audit' } });
      expect(refused.message).toMatch(/_audit/);
    }
    expect(await erasureCount()).toBe(before);
    const created = (await get(`/v1/events?q=${encodeURIComponent(q)}`, KEYS.acme).expect(200)).body
      .data as EventView[];
    expect(created.length).toBeGreaterThan(0);
    expect(created.every((e) => typeof e.actor === 'string')).toBe(true);

    const accountId = await acmeId();
    const done = (
      await erase({ q, fields: ['context.name'], reason: 'personal name', accountId }, ADMIN_KEYS.operator).expect(200)
    ).body.data;
    expect(done.events).toBe(created.length);
    const systemAudit = (
      await get(`/v1/events?q=${encodeURIComponent('chain:_audit action:erasure.done')}`, ADMIN_KEYS.operator).expect(
        200,
      )
    ).body.data as EventView[];
    expect(systemAudit[0]).toMatchObject({
      resource: done.id,
      context: { accountId, events: done.events, fields: ['context.name'], reason: 'personal name' },
    });
    const audit = (await get(`/v1/events?q=${encodeURIComponent('chain:_audit')}&limit=1`, KEYS.acme).expect(200)).body
      .data[0];
    expect((await get(`/v1/chain/${audit.chain.id}/verify`, KEYS.acme).expect(200)).body.data).toMatchObject({
      valid: true,
    });
  });

  it('leaves no erased value quoted in `_audit` (P10): the export’s recorded filters and q are erased with it, and `_audit` still verifies', async () => {
    const email = `zoe-${randomBytes(4).toString('hex')}@example.com`;
    const pin = String(1000 + randomBytes(2).readUInt16BE(0));
    const e = await append({ actor: email, action: 'user.login', context: { pin, ua: 'Firefox' }, chain: 'residue' });
    const period = `after=2000-01-01T00:00:00.000Z&before=2100-01-01T00:00:00.000Z`;
    await get(`/v1/events/export?format=json&${period}&actor=${encodeURIComponent(email)}`, KEYS.acme).expect(200);
    await get(
      `/v1/events/export?format=json&${period}&q=${encodeURIComponent(`context.pin:${pin}`)}`,
      KEYS.acme,
    ).expect(200);
    const quoting = async () =>
      (await auditEntries()).filter(
        (a) => JSON.stringify(a.context).includes(email) || JSON.stringify(a.context).includes(`:${pin}`),
      );
    expect(await quoting()).toHaveLength(2);

    const done = (
      await erase({ q: `actor:"${email}"`, fields: ['actor', 'context.*'], reason: 'GDPR Art. 17' }).expect(200)
    ).body.data;
    expect(done.events).toBe(1);
    expect(await quoting()).toEqual([]);
    // Nothing of the values in any table; the event and `_audit` verify with their commitments.
    expect(await rowsContaining((sql, params) => t.dataSource.query(sql, params), email)).toEqual([]);
    expect((await get(`/v1/events/${e.id}/verify`, KEYS.acme).expect(200)).body.data).toMatchObject({ valid: true });
    const audit = (await auditEntries())[0]!;
    expect((await get(`/v1/chain/${audit.chain.id}/verify`, KEYS.acme).expect(200)).body.data).toMatchObject({
      valid: true,
    });
    // The quotes' erasure is an erasure of its own, which names the first.
    const [quotes, first] = (await get('/v1/erasures').expect(200)).body.data;
    expect(first.id).toBe(done.id);
    expect(quotes).toMatchObject({
      keyId: expect.any(String),
      events: 2,
      reason: `_audit entries quoting values erased by ${done.id}`,
    });
    expect(quotes.fields).toEqual(expect.arrayContaining(['context.filters']));
  });

  it('refuses a q that names no value (400), an empty member (400), and erases or records nothing for a q that matches nothing (422 NOTHING_MATCHED)', async () => {
    await append({ actor: 'guard@example.com', action: 'a.b', context: { k: 'v' }, chain: 'guards' });
    const before = await erasureCount();
    for (const q of ['-action:zzz', 'timestamp:>=2000-01-01T00:00:00Z', '-actor:x -chain:y']) {
      const refused = (await erase({ q, fields: ['actor'], reason: 'r' }).expect(400)).body.error;
      expect(refused.details.fields).toEqual([
        { field: 'q', message: expect.stringMatching(/not negated and names a value/) },
      ]);
    }
    for (const fields of [['context.'], ['actor', 'context.']])
      expect(
        (await erase({ q: 'actor:"guard@example.com"', fields, reason: 'r' }).expect(400)).body.error.details.fields[0]
          .field,
      ).toMatch(/^fields/);
    const none = (
      await erase({ q: 'actor:"nobody-at-all@example.com"', fields: ['actor'], reason: 'typo' }).expect(422)
    ).body.error;
    expect(none).toMatchObject({ code: 'NOTHING_MATCHED', details: {} });
    expect(await erasureCount()).toBe(before);
  });

  it('dryRun counts what would be erased and changes nothing', async () => {
    const e = await append({ actor: 'dry@example.com', action: 'a.b', chain: 'dry' });
    const before = await erasureCount();
    const auditBefore = (await auditEntries()).length;
    const dry = (
      await erase({ q: 'actor:"dry@example.com"', fields: ['actor'], reason: 'r', dryRun: true }).expect(200)
    ).body.data;
    expect(dry).toEqual({ events: 1, skipped: 0, dryRun: true });
    expect((await get(`/v1/events/${e.id}`, KEYS.acme).expect(200)).body.data.actor).toBe('dry@example.com');
    expect(await erasureCount()).toBe(before);
    expect((await auditEntries()).length).toBe(auditBefore);
    await erase({ q: 'actor:"nobody-dry@example.com"', fields: ['actor'], reason: 'r', dryRun: true }).expect(422);
  });

  it('binds the count the caller confirmed (expectEvents): another count at commit is 409 and nothing is erased', async () => {
    const q = 'actor:"counted@example.com"';
    await append({ actor: 'counted@example.com', action: 'a.b', chain: 'counted' });
    await append({ actor: 'counted@example.com', action: 'a.b', chain: 'counted' });
    const counted = (await erase({ q, fields: ['actor'], reason: 'r', dryRun: true }).expect(200)).body.data;
    expect(counted.events).toBe(2);
    const late = await append({ actor: 'counted@example.com', action: 'a.b', chain: 'counted' });
    const before = await erasureCount();
    const refused = await erase({ q, fields: ['actor'], reason: 'r', expectEvents: 2 }).expect(409);
    expect(refused.body.error).toMatchObject({ code: 'CONFLICT', details: { expectEvents: 2, events: 3 } });
    expect((await get(`/v1/events/${late.id}`, KEYS.acme).expect(200)).body.data.actor).toBe('counted@example.com');
    expect(await erasureCount()).toBe(before);
    for (const expectEvents of [0, -1, 1.5, '3', 1_000_000_001])
      expect(
        (await erase({ q, fields: ['actor'], reason: 'r', expectEvents }).expect(400)).body.error.details.fields,
      ).toEqual([expect.objectContaining({ field: 'expectEvents' })]);
    const done = (await erase({ q, fields: ['actor'], reason: 'r', expectEvents: 3 }).expect(200)).body.data;
    expect(done.events).toBe(3);
  });

  it('re-checks its caller in its transaction (P5): a key revoked a moment ago elsewhere erases and holds nothing', async () => {
    const e = await append({ actor: 'stale@example.com', action: 'a.b', chain: 'stale' });
    const made = (
      await t
        .http()
        .post(`/v1/accounts/${await acmeId()}/keys`)
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .send({ name: 'soon-revoked', scopes: ['admin'] })
        .expect(201)
    ).body.data as { id: string; secret: string };
    // The key is known valid to this instance (cached), then revoked by "another instance": in the database only.
    await get('/v1/erasures', made.secret).expect(200);
    await t.dataSource.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1`, [made.id]);
    await erase({ q: 'actor:"stale@example.com"', fields: ['actor'], reason: 'r' }, made.secret).expect(401);
    expect((await get(`/v1/events/${e.id}`, KEYS.acme).expect(200)).body.data.actor).toBe('stale@example.com');
    // So do retention and legal hold changes (docs/contract.md §8).
    const put = (path: string, body: object) =>
      t
        .http()
        .put(path)
        .set(...bearer(made.secret))
        .send(body);
    await put(`/v1/chain/${e.chain.id}/legal-hold`, { hold: true, reason: 'stale' }).expect(401);
    await put(`/v1/chain/${e.chain.id}/retention`, { days: 400 }).expect(401);
    await put(`/v1/accounts/${await acmeId()}/legal-hold`, { hold: true, reason: 'stale' }).expect(401);
    await put(`/v1/accounts/${await acmeId()}/retention`, { days: 400 }).expect(401);
    expect((await get(`/v1/chain/${e.chain.id}/status`, KEYS.acme).expect(200)).body.data).toMatchObject({
      legalHold: false,
    });
  });
});
