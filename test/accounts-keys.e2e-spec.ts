import { setTimeout as sleep } from 'node:timers/promises';
import { adminBootstrapKeys, ADMIN_KEYS, rowsContaining } from './support/admin-keys';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/** docs/contract.md §12 on one app: /v1/me, accounts, keys, tenancy, the last admin key, rotation, `_audit`. */
describe('accounts and keys over HTTP', () => {
  let t: TestApp;
  const secrets: string[] = [];
  beforeAll(async () => {
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys() });
  });
  afterAll(async () => {
    await t.close();
  });

  const as = (key: string) => ({
    get: (path: string) =>
      t
        .http()
        .get(path)
        .set(...bearer(key)),
    post: (path: string, body: object = {}) =>
      t
        .http()
        .post(path)
        .set(...bearer(key))
        .send(body),
    delete: (path: string) =>
      t
        .http()
        .delete(path)
        .set(...bearer(key)),
  });
  const me = async (key: string) =>
    (await as(key).get('/v1/me').expect(200)).body.data as { accountId: string; keyId: string; scopes: string[] };

  let acmeId = '';
  let globexId = '';
  let systemId = '';
  beforeAll(async () => {
    acmeId = (await me(ADMIN_KEYS.acmeAdmin)).accountId;
    globexId = (await me(ADMIN_KEYS.globexAdmin)).accountId;
    systemId = (await me(ADMIN_KEYS.operator)).accountId;
  });

  describe('GET /v1/me', () => {
    it('says who any valid key is', async () => {
      const read = await me(KEYS.acmeReadOnly);
      expect(read).toEqual({
        accountId: acmeId,
        accountName: 'acme',
        keyId: expect.stringMatching(/^key_\w{26}$/),
        scopes: ['read'],
      });
      expect(await me(ADMIN_KEYS.operator)).toMatchObject({ accountName: 'system', scopes: ['operator'] });
      await t.http().get('/v1/me').expect(401);
      await as(KEYS.acme).get('/v1/me?x=1').expect(400);
    });
  });

  describe('accounts', () => {
    it('an operator lists every account, oldest first, in pages', async () => {
      const all = (await as(ADMIN_KEYS.operator).get('/v1/accounts').expect(200)).body;
      expect(all.data.map((a: { name: string }) => a.name)).toEqual(['acme', 'globex', 'system']);
      const first = (await as(ADMIN_KEYS.operator).get('/v1/accounts?limit=2').expect(200)).body;
      expect(first.data).toHaveLength(2);
      const rest = (
        await as(ADMIN_KEYS.operator)
          .get(`/v1/accounts?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`)
          .expect(200)
      ).body;
      expect(rest.data.map((a: { name: string }) => a.name)).toEqual(['system']);
      expect(rest.nextCursor).toBeUndefined();
      await as(ADMIN_KEYS.operator).get('/v1/accounts?cursor=bogus').expect(400);
    });

    it('an admin lists only its own account; a key without admin gets 403', async () => {
      const own = (await as(ADMIN_KEYS.acmeAdmin).get('/v1/accounts').expect(200)).body;
      expect(own.data.map((a: { id: string }) => a.id)).toEqual([acmeId]);
      await as(KEYS.acme).get('/v1/accounts').expect(403);
    });

    it('counts events, chains and keys from the heads, the _audit chain included', async () => {
      for (const chain of ['a', 'b', 'a'])
        await as(KEYS.acme).post('/v1/events', { actor: 'u', action: 'x', chain }).expect(201);
      const account = (await as(ADMIN_KEYS.acmeAdmin).get(`/v1/accounts/${acmeId}`).expect(200)).body.data;
      const chains = (await as(KEYS.acme).get('/v1/chains').expect(200)).body.data as {
        name: string;
        eventCount: number;
      }[];
      expect(account).toMatchObject({
        id: acmeId,
        name: 'acme',
        chainCount: chains.length,
        eventCount: chains.reduce((n, c) => n + c.eventCount, 0),
        keyCount: 5,
        lastEventAt: expect.any(String),
      });
      expect(account.eventCount).toBeGreaterThanOrEqual(3);
    });

    it('GET /v1/accounts/:id: operator any, admin its own, 404 for the rest', async () => {
      await as(ADMIN_KEYS.operator).get(`/v1/accounts/${globexId}`).expect(200);
      await as(ADMIN_KEYS.acmeAdmin).get(`/v1/accounts/${globexId}`).expect(404);
      await as(ADMIN_KEYS.acmeAdmin).get('/v1/accounts/acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D2').expect(404);
      await as(ADMIN_KEYS.acmeAdmin).get('/v1/accounts/nonsense').expect(404);
      await as(KEYS.acme).get(`/v1/accounts/${acmeId}`).expect(403);
    });

    it('POST /v1/accounts: operator only, unique names, valid names', async () => {
      const created = (await as(ADMIN_KEYS.operator).post('/v1/accounts', { name: 'initech' }).expect(201)).body.data;
      expect(created).toMatchObject({ name: 'initech', eventCount: 0, chainCount: 0, keyCount: 0, lastEventAt: null });
      expect(
        (await as(ADMIN_KEYS.operator).post('/v1/accounts', { name: 'initech' }).expect(409)).body.error.code,
      ).toBe('CONFLICT');
      await as(ADMIN_KEYS.operator).post('/v1/accounts', { name: 'bad name' }).expect(400);
      await as(ADMIN_KEYS.operator).post('/v1/accounts', { name: 'x', extra: 1 }).expect(400);
      await as(ADMIN_KEYS.acmeAdmin).post('/v1/accounts', { name: 'nope' }).expect(403);
      const audit = await auditEvents(ADMIN_KEYS.operator);
      expect(audit).toEqual([
        expect.objectContaining({
          actor: `key:${(await me(ADMIN_KEYS.operator)).keyId}`,
          action: 'account.created',
          resource: created.id,
          context: { name: 'initech' },
        }),
      ]);
    });
  });

  describe('keys', () => {
    const keysOf = (accountId: string) => `/v1/accounts/${accountId}/keys`;

    it('an admin makes a key: the secret once, 8-character prefix + at least 32 random characters; it works', async () => {
      const res = await as(ADMIN_KEYS.acmeAdmin)
        .post(keysOf(acmeId), { name: 'billing', scopes: ['read'] })
        .expect(201);
      const made = res.body.data;
      secrets.push(made.secret);
      expect(made.secret).toMatch(/^.{8}[A-Za-z0-9_-]{32,}$/);
      expect(made).toMatchObject({
        name: 'billing',
        prefix: made.secret.slice(0, 8),
        scopes: ['read'],
        revokedAt: null,
      });
      await as(made.secret).get('/v1/chains').expect(200);
      await as(made.secret).post('/v1/events', { actor: 'a', action: 'b' }).expect(403);
      const listed = (await as(ADMIN_KEYS.acmeAdmin).get(keysOf(acmeId)).expect(200)).body.data;
      const { secret: _secret, ...shown } = made;
      const found = listed.find((k: { id: string }) => k.id === made.id);
      expect({ ...found, lastUsedAt: null }).toEqual({ ...shown, lastUsedAt: null }); // lastUsedAt: written off the request's path
      expect(JSON.stringify(listed)).not.toContain(made.secret);
    });

    it('scope ceilings: admin at most ingest+read+admin; operator keys only for system; unknown scopes 400', async () => {
      await as(ADMIN_KEYS.acmeAdmin)
        .post(keysOf(acmeId), { name: 'x', scopes: ['operator'] })
        .expect(403);
      await as(ADMIN_KEYS.acmeAdmin)
        .post(keysOf(acmeId), { name: 'x', scopes: ['ingest', 'read', 'admin'] })
        .expect(201);
      await as(ADMIN_KEYS.operator)
        .post(keysOf(acmeId), { name: 'x', scopes: ['operator'] })
        .expect(403);
      const op = (
        await as(ADMIN_KEYS.operator)
          .post(keysOf(systemId), { name: 'op2', scopes: ['operator'] })
          .expect(201)
      ).body.data;
      secrets.push(op.secret);
      await as(op.secret).get('/v1/accounts').expect(200);
      await as(ADMIN_KEYS.acmeAdmin)
        .post(keysOf(acmeId), { name: 'x', scopes: ['root'] })
        .expect(400);
      await as(ADMIN_KEYS.acmeAdmin).post(keysOf(acmeId), { name: 'x', scopes: [] }).expect(400);
      await as(ADMIN_KEYS.acmeAdmin)
        .post(keysOf(acmeId), { name: '', scopes: ['read'] })
        .expect(400);
      await as(ADMIN_KEYS.acmeAdmin)
        .post(keysOf(acmeId), { name: 'x', scopes: ['read'], expiresAt: '2020-01-01T00:00:00Z' })
        .expect(400);
    });

    it('a value the database cannot store is a 400 naming its field, never a 500 (§8): lone surrogates, null', async () => {
      const fieldsOf = async (res: Promise<{ status: number; body: { error: { details: { fields: unknown } } } }>) => {
        const answer = await res;
        expect(answer.status).toBe(400);
        return answer.body.error.details.fields as { field: string; message: string }[];
      };
      for (const name of ['sur\ud800rogate', 'trail\udc00', '\udbff']) {
        const fields = await fieldsOf(as(ADMIN_KEYS.acmeAdmin).post(keysOf(acmeId), { name, scopes: ['read'] }));
        expect(fields).toEqual([{ field: 'name', message: expect.stringContaining('lone UTF-16 surrogates') }]);
        expect((await fieldsOf(as(ADMIN_KEYS.operator).post('/v1/accounts', { name }))).map((f) => f.field)).toEqual([
          'name',
        ]);
      }
      // A well-formed pair (an emoji) is a name like any other.
      await as(ADMIN_KEYS.acmeAdmin)
        .post(keysOf(acmeId), { name: 'deploy \ud83d\ude80', scopes: ['read'] })
        .expect(201);
      const key = (await as(ADMIN_KEYS.acmeAdmin).get(keysOf(acmeId)).expect(200)).body.data[0];
      for (const body of [{ overlapSeconds: null }, { overlapSeconds: '60' }, { overlapSeconds: 1.5 }])
        expect(
          (await fieldsOf(as(ADMIN_KEYS.acmeAdmin).post(`${keysOf(acmeId)}/${key.id}/rotate`, body))).map(
            (f) => f.field,
          ),
        ).toEqual(['overlapSeconds']);
      expect(
        (
          await fieldsOf(
            as(ADMIN_KEYS.acmeAdmin).post(keysOf(acmeId), { name: 'x', scopes: ['read'], expiresAt: null }),
          )
        ).map((f) => f.field),
      ).toEqual(['expiresAt']);
    });

    it('lists keys in pages, oldest first; a cursor is bound to its account', async () => {
      const all = (await as(ADMIN_KEYS.acmeAdmin).get(keysOf(acmeId)).expect(200)).body;
      expect(all.nextCursor).toBeUndefined();
      const first = (
        await as(ADMIN_KEYS.acmeAdmin)
          .get(`${keysOf(acmeId)}?limit=2`)
          .expect(200)
      ).body;
      const rest = (
        await as(ADMIN_KEYS.acmeAdmin)
          .get(`${keysOf(acmeId)}?limit=200&cursor=${encodeURIComponent(first.nextCursor)}`)
          .expect(200)
      ).body;
      // lastUsedAt is written off the request's path (KeyUsage, a second after a use): maybe between the reads.
      const unused = (keys: object[]) => keys.map((k) => ({ ...k, lastUsedAt: null }));
      expect(unused([...first.data, ...rest.data])).toEqual(unused(all.data));
      await as(ADMIN_KEYS.operator)
        .get(`${keysOf(globexId)}?cursor=${encodeURIComponent(first.nextCursor)}`)
        .expect(400);
      await as(ADMIN_KEYS.acmeAdmin)
        .get(`${keysOf(acmeId)}?limit=0`)
        .expect(400);
    });

    it('tenancy: an admin of acme gets 404 for globex keys; an operator manages any', async () => {
      await as(ADMIN_KEYS.acmeAdmin).get(keysOf(globexId)).expect(404);
      await as(ADMIN_KEYS.acmeAdmin)
        .post(keysOf(globexId), { name: 'x', scopes: ['read'] })
        .expect(404);
      const globexKey = (await as(ADMIN_KEYS.globexAdmin).get(keysOf(globexId)).expect(200)).body.data[0];
      await as(ADMIN_KEYS.acmeAdmin)
        .delete(`${keysOf(globexId)}/${globexKey.id}`)
        .expect(404);
      await as(ADMIN_KEYS.acmeAdmin)
        .post(`${keysOf(globexId)}/${globexKey.id}/rotate`, {})
        .expect(404);
      await as(ADMIN_KEYS.acmeAdmin)
        .delete(`${keysOf(acmeId)}/${globexKey.id}`)
        .expect(404);
      await as(ADMIN_KEYS.operator).get(keysOf(globexId)).expect(200);
      const made = (
        await as(ADMIN_KEYS.operator)
          .post(keysOf(globexId), { name: 'ops', scopes: ['read'] })
          .expect(201)
      ).body.data;
      secrets.push(made.secret);
      expect((await as(made.secret).get('/v1/me').expect(200)).body.data.accountId).toBe(globexId);
    });

    it('revoke: 200 with revokedAt, again 200 unchanged; the key is refused at once', async () => {
      const made = (
        await as(ADMIN_KEYS.acmeAdmin)
          .post(keysOf(acmeId), { name: 'temp', scopes: ['read'] })
          .expect(201)
      ).body.data;
      secrets.push(made.secret);
      await as(made.secret).get('/v1/chains').expect(200); // cached now
      const revoked = (
        await as(ADMIN_KEYS.acmeAdmin)
          .delete(`${keysOf(acmeId)}/${made.id}`)
          .expect(200)
      ).body.data;
      expect(revoked.revokedAt).toEqual(expect.any(String));
      const again = (
        await as(ADMIN_KEYS.acmeAdmin)
          .delete(`${keysOf(acmeId)}/${made.id}`)
          .expect(200)
      ).body.data;
      // lastUsedAt is written off the request's path (KeyUsage, a second after the use): maybe between the two.
      expect({ ...again, lastUsedAt: null }).toEqual({ ...revoked, lastUsedAt: null });
      await as(made.secret).get('/v1/chains').expect(401);
      await as(ADMIN_KEYS.acmeAdmin)
        .delete(`${keysOf(acmeId)}/key_01KAR2Y6T0F5M3Q8W9Z1B4C7D3`)
        .expect(404);
    });

    it('the last admin key cannot revoke itself (409); with another admin key left it can', async () => {
      const globexAdmin = await me(ADMIN_KEYS.globexAdmin);
      const res = await as(ADMIN_KEYS.globexAdmin)
        .delete(`${keysOf(globexId)}/${globexAdmin.keyId}`)
        .expect(409);
      expect(res.body.error.code).toBe('CONFLICT');
      const second = (
        await as(ADMIN_KEYS.globexAdmin)
          .post(keysOf(globexId), { name: 'admin2', scopes: ['admin'] })
          .expect(201)
      ).body.data;
      secrets.push(second.secret);
      await as(ADMIN_KEYS.globexAdmin)
        .delete(`${keysOf(globexId)}/${globexAdmin.keyId}`)
        .expect(200);
      await as(ADMIN_KEYS.globexAdmin).get('/v1/me').expect(401);
      await as(second.secret)
        .delete(`${keysOf(globexId)}/${second.id}`)
        .expect(409);
    });

    it('two last admin keys revoking themselves at once: exactly one succeeds, the other gets 409', async () => {
      const account = (await as(ADMIN_KEYS.operator).post('/v1/accounts', { name: 'race' }).expect(201)).body.data;
      const admins = [];
      for (const name of ['one', 'two']) {
        const made = (
          await as(ADMIN_KEYS.operator)
            .post(keysOf(account.id), { name, scopes: ['admin'] })
            .expect(201)
        ).body.data;
        secrets.push(made.secret);
        admins.push(made);
      }
      const statuses = await Promise.all(
        admins.map(async (k) => (await as(k.secret).delete(`${keysOf(account.id)}/${k.id}`)).status),
      );
      expect(statuses.sort()).toEqual([200, 409]);
    });

    it('rotate: a new key with the same name and scopes; the old one works until the overlap ends, then 401', async () => {
      const old = (
        await as(ADMIN_KEYS.acmeAdmin)
          .post(keysOf(acmeId), { name: 'rotating', scopes: ['ingest', 'read'] })
          .expect(201)
      ).body.data;
      secrets.push(old.secret);
      await as(old.secret).get('/v1/chains').expect(200);
      const rotated = (
        await as(ADMIN_KEYS.acmeAdmin)
          .post(`${keysOf(acmeId)}/${old.id}/rotate`, { overlapSeconds: 2 })
          .expect(201)
      ).body.data;
      secrets.push(rotated.secret);
      expect(rotated).toMatchObject({ name: 'rotating', scopes: ['ingest', 'read'], expiresAt: null });
      expect(rotated.id).not.toBe(old.id);
      const started = Date.now();
      await as(old.secret).get('/v1/chains').expect(200);
      await as(rotated.secret).get('/v1/chains').expect(200);
      const listed = (await as(ADMIN_KEYS.acmeAdmin).get(keysOf(acmeId)).expect(200)).body.data;
      const oldListed = listed.find((k: { id: string }) => k.id === old.id);
      expect(Date.parse(oldListed.expiresAt) - started).toBeLessThanOrEqual(2_000);
      await sleep(Math.max(0, Date.parse(oldListed.expiresAt) - Date.now()) + 50);
      await as(old.secret).get('/v1/chains').expect(401);
      await as(rotated.secret).get('/v1/chains').expect(200);
      await as(ADMIN_KEYS.acmeAdmin)
        .post(`${keysOf(acmeId)}/${old.id}/rotate`, {})
        .expect(409);
      await as(ADMIN_KEYS.acmeAdmin)
        .post(`${keysOf(acmeId)}/${rotated.id}/rotate`, { overlapSeconds: 86_401 })
        .expect(400);
    });

    it('expiresAt: a key works until then, then 401; lastUsedAt is written once used', async () => {
      const expiresAt = new Date(Date.now() + 1_500).toISOString();
      const made = (
        await as(ADMIN_KEYS.acmeAdmin)
          .post(keysOf(acmeId), { name: 'short', scopes: ['read'], expiresAt })
          .expect(201)
      ).body.data;
      secrets.push(made.secret);
      expect(made.expiresAt).toBe(expiresAt);
      await as(made.secret).get('/v1/chains').expect(200);
      await sleep(Date.parse(expiresAt) - Date.now() + 50);
      await as(made.secret).get('/v1/chains').expect(401);
      const listed = (await as(ADMIN_KEYS.acmeAdmin).get(keysOf(acmeId)).expect(200)).body.data;
      expect(listed.find((k: { id: string }) => k.id === made.id).lastUsedAt).toEqual(expect.any(String));
    });
  });

  /** The events of the caller's `_audit` chain, oldest first. */
  async function auditEvents(key: string): Promise<Record<string, unknown>[]> {
    const [chain] = (await as(key).get('/v1/chains?name=_audit').expect(200)).body.data;
    if (!chain) return [];
    const events = (await as(key).get(`/v1/events?chain_id=${chain.id}&limit=200`).expect(200)).body.data;
    return (events as Record<string, unknown>[]).reverse();
  }

  describe('_audit', () => {
    it('holds one event per change, with the acting key, and verifies', async () => {
      const adminKeyId = (await me(ADMIN_KEYS.acmeAdmin)).keyId;
      const before = (await auditEvents(KEYS.acme)).length;
      const made = (
        await as(ADMIN_KEYS.acmeAdmin)
          .post(`/v1/accounts/${acmeId}/keys`, { name: 'audited', scopes: ['read'] })
          .expect(201)
      ).body.data;
      secrets.push(made.secret);
      const rotated = (
        await as(ADMIN_KEYS.acmeAdmin)
          .post(`/v1/accounts/${acmeId}/keys/${made.id}/rotate`, { overlapSeconds: 0 })
          .expect(201)
      ).body.data;
      secrets.push(rotated.secret);
      await as(ADMIN_KEYS.acmeAdmin).delete(`/v1/accounts/${acmeId}/keys/${rotated.id}`).expect(200);
      await as(ADMIN_KEYS.acmeAdmin).delete(`/v1/accounts/${acmeId}/keys/${rotated.id}`).expect(200); // no change, no event
      await t
        .http()
        .get('/v1/events/export')
        .query({ format: 'json', after: '2000-01-01T00:00:00Z', before: '2100-01-01T00:00:00Z' })
        .set(...bearer(KEYS.acmeReadOnly))
        .expect(200);
      const readKeyId = (await me(KEYS.acmeReadOnly)).keyId;
      const events = (await auditEvents(KEYS.acme)).slice(before);
      expect(events.map((e) => [e.actor, e.action, e.resource])).toEqual([
        [`key:${adminKeyId}`, 'key.created', made.id],
        [`key:${adminKeyId}`, 'key.rotated', made.id],
        [`key:${adminKeyId}`, 'key.revoked', rotated.id],
        [`key:${readKeyId}`, 'export.created', null],
      ]);
      expect(events[1]!.context).toMatchObject({ newKeyId: rotated.id, overlapSeconds: 0 });
      const chainId = ((await as(KEYS.acme).get('/v1/chains?name=_audit').expect(200)).body.data[0] as { id: string })
        .id;
      expect((await as(KEYS.acme).get(`/v1/chain/${chainId}/verify`).expect(200)).body.data).toMatchObject({
        valid: true,
      });
    });

    it('clients cannot append to chains whose names start with _ (400)', async () => {
      const single = await as(KEYS.acme).post('/v1/events', { actor: 'a', action: 'b', chain: '_audit' }).expect(400);
      expect(single.body.error.details.fields).toEqual([expect.objectContaining({ field: 'chain' })]);
      await as(KEYS.acme)
        .post('/v1/events/batch', {
          events: [
            { actor: 'a', action: 'b' },
            { actor: 'a', action: 'b', chain: '_x' },
          ],
        })
        .expect(400);
    });

    it('no secret made by the API is stored anywhere: every column of every table searched', async () => {
      expect(secrets.length).toBeGreaterThan(5);
      const query = (sql: string, params?: unknown[]) => t.dataSource.query(sql, params);
      const configured = [...Object.values(KEYS), ...Object.values(ADMIN_KEYS)];
      for (const secret of [...secrets, ...configured]) expect(await rowsContaining(query, secret)).toEqual([]);
      // The search finds what is there: a prefix is stored.
      expect((await rowsContaining(query, secrets[0]!.slice(0, 8))).length).toBeGreaterThan(0);
    });
  });
});
