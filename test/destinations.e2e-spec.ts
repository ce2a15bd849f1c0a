import { SecretBox } from '../apps/api/src/streams/secret-box';
import { adminBootstrapKeys, ADMIN_KEYS, rowsContaining } from './support/admin-keys';
import { CapturedLogs, capturingLogs } from './support/captured-logs';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

type Body = Record<string, unknown>;
/** A destination as the API answers it (the members the suite uses by name). */
type Destination = Body & { id: string };
const LIMIT = 5;
const NO_SUCH = 'dst_01KAR2Y6T0F5M3Q8W9Z1B4C7D2';

/** docs/contract.md §16's destinations API: CRUD, validation, tenancy, the limit, credentials shown once, controls, `_audit`. */
describe('destinations over HTTP', () => {
  let t: TestApp;
  const logs = new CapturedLogs();
  /** Every credential given or made: none may show again anywhere. */
  const credentials: string[] = [];
  beforeAll(async () => {
    t = await startTestApp(
      // The API alone: no delivery changes what these tests read (test/stream-delivery.e2e-spec.ts delivers).
      { bootstrapKeys: adminBootstrapKeys(), destinationsPerAccount: LIMIT, logLevel: 'debug', streamDelivery: false },
      undefined,
      undefined,
      capturingLogs(logs),
    );
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
    patch: (path: string, body: object) =>
      t
        .http()
        .patch(path)
        .set(...bearer(key))
        .send(body),
    delete: (path: string) =>
      t
        .http()
        .delete(path)
        .set(...bearer(key)),
  });
  const me = async (key: string) =>
    (await as(key).get('/v1/me').expect(200)).body.data as { accountId: string; keyId: string };
  const sql = (text: string, params: unknown[] = []) => t.dataSource.query<Promise<Body[]>>(text, params);
  const rowOf = async (id: string) => (await sql(`SELECT * FROM destinations WHERE id = $1`, [id]))[0]!;
  const opened = async (id: string) => t.app.get(SecretBox).open<Body>(id, (await rowOf(id)).secrets as Buffer);
  async function auditEvents(key: string): Promise<Body[]> {
    const [chain] = (await as(key).get('/v1/chains?name=_audit').expect(200)).body.data;
    if (!chain) return [];
    const events = (await as(key).get(`/v1/events?chain_id=${chain.id}&limit=200`).expect(200)).body.data;
    return (events as Body[]).reverse();
  }
  const lastAudit = async () => (await auditEvents(KEYS.acme)).at(-1);

  let acme = '';
  let globex = '';
  let adminKeyId = '';
  beforeAll(async () => {
    ({ accountId: acme, keyId: adminKeyId } = await me(ADMIN_KEYS.acmeAdmin));
    globex = (await me(ADMIN_KEYS.globexAdmin)).accountId;
  });
  const of = (accountId: string, rest = '') => `/v1/accounts/${accountId}/destinations${rest}`;

  const WEBHOOK = { name: 'SIEM hook', kind: 'webhook', url: 'https://siem.example.com/hook?sig=abc' };
  const SPLUNK = {
    name: 'Splunk',
    kind: 'splunk_hec',
    url: 'https://splunk.example.com:8088',
    token: 'splunk-token-4f9c2b7d1e8a',
    sourcetype: 'audit',
    headers: { 'X-Tenant': 'header-value-7d3e9a1c' },
  };
  let webhook: Destination = { id: '' };
  let webhookSecret = '';
  let splunk: Destination = { id: '' };

  describe('create', () => {
    it('a webhook: defaults, every field of Destination, its secret once', async () => {
      const res = await as(ADMIN_KEYS.acmeAdmin).post(of(acme), WEBHOOK).expect(201);
      const { secret, ...view } = res.body.data as Destination & { secret: string };
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(secret.slice(6), 'base64')).toHaveLength(32);
      expect(view).toEqual({
        id: expect.stringMatching(/^dst_[0-9A-HJKMNP-TV-Z]{26}$/),
        name: 'SIEM hook',
        kind: 'webhook',
        url: WEBHOOK.url,
        format: 'native',
        q: null,
        batchSize: 100,
        timeoutSeconds: 10,
        state: 'active',
        createdAt: expect.any(String),
        start: 'now',
        deliveredEvents: 0,
        lastDeliveredAt: null,
        lastDeliveredEventAt: null,
        lagSeconds: null,
        consecutiveFailures: 0,
        lastError: null,
      });
      webhook = view;
      webhookSecret = secret;
      credentials.push(secret);
      expect(await opened(view.id)).toEqual({ webhookSecrets: [{ secret, until: null }], headers: {} });
      expect(await lastAudit()).toMatchObject({
        actor: `key:${adminKeyId}`,
        action: 'destination.created',
        resource: view.id,
        context: {
          name: 'SIEM hook',
          kind: 'webhook',
          url: 'https://siem.example.com/hook',
          format: 'native',
          q: null,
          batchSize: 100,
          timeoutSeconds: 10,
          start: 'now',
        },
      });
    });

    it('a splunk_hec with token, headers and options: no secret in the answer; settings as given', async () => {
      const res = await as(ADMIN_KEYS.acmeAdmin)
        .post(of(acme), { ...SPLUNK, q: 'action:order.*', batchSize: 500, timeoutSeconds: 30, start: 'beginning' })
        .expect(201);
      splunk = res.body.data;
      credentials.push(SPLUNK.token, SPLUNK.headers['X-Tenant']);
      expect(splunk).not.toHaveProperty('secret');
      expect(splunk).toMatchObject({ q: 'action:order.*', batchSize: 500, timeoutSeconds: 30, start: 'beginning' });
      expect((await rowOf(splunk.id)).position).toEqual({ since: '1:1:', until: null, after: null });
      expect((await rowOf(splunk.id)).options).toEqual({ sourcetype: 'audit' });
      expect(await opened(splunk.id)).toEqual({ token: SPLUNK.token, headers: SPLUNK.headers });
      expect((await lastAudit())!.context).toEqual({
        name: 'Splunk',
        kind: 'splunk_hec',
        url: 'https://splunk.example.com:8088/',
        format: 'native',
        q: 'action:order.*',
        batchSize: 500,
        timeoutSeconds: 30,
        start: 'beginning',
        sourcetype: 'audit',
        headers: ['X-Tenant'],
        credentials: ['token'],
      });
    });

    it('an ISO start is kept as given and starts at that time', async () => {
      const start = '2026-01-02T03:04:05+01:00';
      const made = (
        await as(ADMIN_KEYS.operator)
          .post(of(acme), { ...WEBHOOK, name: 'from', start })
          .expect(201)
      ).body.data;
      expect(made.start).toBe(start);
      expect((await rowOf(made.id)).position).toEqual({
        since: '1:1:',
        until: null,
        after: { time: '2026-01-02T02:04:05.000Z', chainId: '', position: 0 },
      });
      credentials.push(made.secret);
      await as(ADMIN_KEYS.operator)
        .delete(of(acme, `/${made.id}`))
        .expect(200);
    });

    const longHeaders = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']));
    const invalid: [string, Body, string][] = [
      ['empty name', { ...WEBHOOK, name: '' }, 'name'],
      ['long name', { ...WEBHOOK, name: 'n'.repeat(101) }, 'name'],
      ['control character in name', { ...WEBHOOK, name: 'a\u0007b' }, 'name'],
      ['null name', { ...WEBHOOK, name: null }, 'name'],
      ['no name', { kind: 'webhook', url: WEBHOOK.url }, 'name'],
      ['unknown kind', { ...WEBHOOK, kind: 'ftp' }, 'kind'],
      ['no url', { name: 'x', kind: 'webhook' }, 'url'],
      ['http url without STREAM_ALLOW_PRIVATE_NETWORKS', { ...WEBHOOK, url: 'http://siem.example.com/' }, 'url'],
      ['not a url', { ...WEBHOOK, url: 'siem' }, 'url'],
      ['long url', { ...WEBHOOK, url: `https://a.example.com/${'x'.repeat(2100)}` }, 'url'],
      ['unknown format', { ...WEBHOOK, format: 'xml' }, 'format'],
      ['cef for a webhook', { ...WEBHOOK, format: 'cef' }, 'format'],
      ['malformed q', { ...WEBHOOK, q: 'actor:"unclosed' }, 'q'],
      ['batchSize 0', { ...WEBHOOK, batchSize: 0 }, 'batchSize'],
      ['batchSize 1001', { ...WEBHOOK, batchSize: 1001 }, 'batchSize'],
      ['batchSize 1.5', { ...WEBHOOK, batchSize: 1.5 }, 'batchSize'],
      ['batchSize as text', { ...WEBHOOK, batchSize: '10' }, 'batchSize'],
      ['timeoutSeconds 0', { ...WEBHOOK, timeoutSeconds: 0 }, 'timeoutSeconds'],
      ['timeoutSeconds 31', { ...WEBHOOK, timeoutSeconds: 31 }, 'timeoutSeconds'],
      ['start yesterday', { ...WEBHOOK, start: 'yesterday' }, 'start'],
      ['headers an array', { ...WEBHOOK, headers: ['X-A'] }, 'headers'],
      ['21 headers', { ...WEBHOOK, headers: longHeaders }, 'headers'],
      ['a header name that is no token', { ...WEBHOOK, headers: { 'X Bad': 'v' } }, 'headers'],
      ['Authorization', { ...WEBHOOK, headers: { Authorization: 'v' } }, 'headers'],
      ['Host', { ...WEBHOOK, headers: { host: 'v' } }, 'headers'],
      ['Content-Type', { ...WEBHOOK, headers: { 'Content-Type': 'v' } }, 'headers'],
      ['DD-API-KEY', { ...WEBHOOK, headers: { 'dd-api-key': 'v' } }, 'headers'],
      ['webhook-id', { ...WEBHOOK, headers: { 'Webhook-Id': 'v' } }, 'headers'],
      ['a value with a newline', { ...WEBHOOK, headers: { 'X-A': 'a\r\nX-B: b' } }, 'headers'],
      ['a value of 1001 characters', { ...WEBHOOK, headers: { 'X-A': 'v'.repeat(1001) } }, 'headers'],
      ['a value not a string', { ...WEBHOOK, headers: { 'X-A': 1 } }, 'headers'],
      ['a token for a webhook', { ...WEBHOOK, token: 'abc' }, 'token'],
      ['an apiKey for splunk_hec', { ...SPLUNK, apiKey: 'abc' }, 'apiKey'],
      ['sourcetype for datadog', { ...WEBHOOK, kind: 'datadog', apiKey: 'k', sourcetype: 's' }, 'sourcetype'],
      ['index for a webhook', { ...WEBHOOK, index: 'main' }, 'index'],
      ['splunk_hec without a token', { ...SPLUNK, token: undefined }, 'token'],
      ['datadog without an apiKey', { ...WEBHOOK, kind: 'datadog', url: 'https://http-intake.example.com' }, 'apiKey'],
      ['an unknown field', { ...WEBHOOK, secret: 'whsec_mine' }, 'secret'],
    ];
    it.each(invalid)('400 for %s, naming the field', async (_case, body, field) => {
      const res = await as(ADMIN_KEYS.acmeAdmin).post(of(acme), body).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
      expect(JSON.stringify(res.body)).not.toContain('header-value');
    });

    it('nothing was made by the refused bodies', async () => {
      const { n } = (
        await sql(`SELECT count(*)::int AS n FROM destinations WHERE account_id = audit_ulid_uuid($1)`, [acme])
      )[0]!;
      expect(n).toBe(2);
    });
  });

  describe('reads', () => {
    it('lists oldest first in pages; reads one; never a credential', async () => {
      const all = (await as(ADMIN_KEYS.acmeAdmin).get(of(acme)).expect(200)).body;
      expect(all.data.map((d: Body) => d.id)).toEqual([webhook.id, splunk.id]);
      const first = (await as(ADMIN_KEYS.acmeAdmin).get(of(acme, '?limit=1')).expect(200)).body;
      expect(first.data.map((d: Body) => d.id)).toEqual([webhook.id]);
      const rest = (
        await as(ADMIN_KEYS.acmeAdmin)
          .get(of(acme, `?limit=1&cursor=${encodeURIComponent(first.nextCursor)}`))
          .expect(200)
      ).body;
      expect(rest.data.map((d: Body) => d.id)).toEqual([splunk.id]);
      expect(rest.nextCursor).toBeUndefined();
      await as(ADMIN_KEYS.acmeAdmin).get(of(acme, '?cursor=bogus')).expect(400);
      await as(ADMIN_KEYS.globexAdmin)
        .get(of(globex, `?cursor=${encodeURIComponent(first.nextCursor)}`))
        .expect(400);
      const one = (
        await as(ADMIN_KEYS.acmeAdmin)
          .get(of(acme, `/${webhook.id}`))
          .expect(200)
      ).body.data;
      expect(one).toEqual(webhook);
      for (const body of [all, one]) for (const c of credentials) expect(JSON.stringify(body)).not.toContain(c);
    });

    it('lagSeconds: 0 when active and caught up, else seconds since the last event delivered', async () => {
      const at = new Date(Date.now() - 60_000);
      await sql(`UPDATE destinations SET last_delivered_event_at = $2, caught_up = false WHERE id = $1`, [
        splunk.id,
        at,
      ]);
      const behind = (
        await as(ADMIN_KEYS.acmeAdmin)
          .get(of(acme, `/${splunk.id}`))
          .expect(200)
      ).body.data;
      expect(behind.lagSeconds).toBeGreaterThanOrEqual(60);
      expect(behind.lagSeconds).toBeLessThan(90);
      await sql(`UPDATE destinations SET caught_up = true WHERE id = $1`, [splunk.id]);
      expect(
        (
          await as(ADMIN_KEYS.acmeAdmin)
            .get(of(acme, `/${splunk.id}`))
            .expect(200)
        ).body.data.lagSeconds,
      ).toBe(0);
      await sql(`UPDATE destinations SET last_delivered_event_at = NULL, caught_up = false WHERE id = $1`, [splunk.id]);
    });
  });

  describe('tenancy', () => {
    it('an admin of another account gets 404 for every route; unknown and malformed ids are 404', async () => {
      const other = as(ADMIN_KEYS.globexAdmin);
      const one = of(acme, `/${webhook.id}`);
      await other.get(of(acme)).expect(404);
      await other.post(of(acme), WEBHOOK).expect(404);
      await other.get(one).expect(404);
      await other.patch(one, { name: 'mine' }).expect(404);
      await other.delete(one).expect(404);
      for (const action of ['pause', 'resume', 'rotate-secret']) await other.post(`${one}/${action}`).expect(404);
      await other.post(`${one}/replay`, { from: '2026-01-01T00:00:00Z' }).expect(404);
      // acme's destination under globex's path (globex's own admin): another account's resource.
      await other.get(of(globex, `/${webhook.id}`)).expect(404);
      await other.delete(of(globex, `/${webhook.id}`)).expect(404);
      await as(ADMIN_KEYS.acmeAdmin)
        .get(of(acme, `/${NO_SUCH}`))
        .expect(404);
      await as(ADMIN_KEYS.acmeAdmin).get(of(acme, '/nonsense')).expect(404);
      await as(ADMIN_KEYS.acmeAdmin).get(of('acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D2')).expect(404);
      await as(ADMIN_KEYS.acmeAdmin).get(of('nonsense')).expect(404);
      expect((await as(ADMIN_KEYS.acmeAdmin).get(one).expect(200)).body.data.name).toBe('SIEM hook');
    });

    it('an operator manages any account; read and ingest keys get 403', async () => {
      await as(ADMIN_KEYS.operator)
        .get(of(acme, `/${webhook.id}`))
        .expect(200);
      await as(ADMIN_KEYS.operator).get(of(globex)).expect(200);
      for (const key of [KEYS.acmeReadOnly, KEYS.acmeIngestOnly, KEYS.acme]) {
        expect((await as(key).get(of(acme)).expect(403)).body.error.code).toBe('FORBIDDEN');
        await as(key).post(of(acme), WEBHOOK).expect(403);
        await as(key)
          .post(of(acme, `/${webhook.id}/pause`))
          .expect(403);
      }
    });
  });

  describe('change', () => {
    it('PATCH changes settings, moves the version on, and records what changed (no query string)', async () => {
      const path = of(acme, `/${webhook.id}`);
      const before = (await rowOf(webhook.id)).version as number;
      const changed = (
        await as(ADMIN_KEYS.acmeAdmin)
          .patch(path, { name: 'SIEM', url: 'https://siem2.example.com/in?token=t0p', q: 'actor:alice', batchSize: 10 })
          .expect(200)
      ).body.data;
      expect(changed).toMatchObject({ name: 'SIEM', url: 'https://siem2.example.com/in?token=t0p', q: 'actor:alice' });
      expect(changed.batchSize).toBe(10);
      expect((await rowOf(webhook.id)).version).toBe(before + 1);
      expect(await lastAudit()).toMatchObject({
        action: 'destination.changed',
        resource: webhook.id,
        context: { name: 'SIEM', url: 'https://siem2.example.com/in', q: 'actor:alice', batchSize: 10 },
      });
      const cleared = (await as(ADMIN_KEYS.acmeAdmin).patch(path, { q: null }).expect(200)).body.data;
      expect(cleared.q).toBeNull();
      expect((await lastAudit())!.context).toEqual({ q: null });
      for (const c of credentials) expect(JSON.stringify(cleared)).not.toContain(c);
    });

    it('PATCH refuses kind, start, another kind’s fields, nulls and bad values (400 naming them)', async () => {
      const path = of(acme, `/${webhook.id}`);
      const cases: [Body, string][] = [
        [{ kind: 'splunk_hec' }, 'kind'],
        [{ start: 'beginning' }, 'start'],
        [{ token: 'abc' }, 'token'],
        [{ sourcetype: 'x' }, 'sourcetype'],
        [{ name: null }, 'name'],
        [{ batchSize: null }, 'batchSize'],
        [{ format: 'cef' }, 'format'],
        [{ url: 'nats://nats.example.com:4222/audit' }, 'url'],
        [{ headers: { Connection: 'close' } }, 'headers'],
        [{ timeoutSeconds: 31 }, 'timeoutSeconds'],
      ];
      for (const [body, field] of cases) {
        const res = await as(ADMIN_KEYS.acmeAdmin).patch(path, body).expect(400);
        expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
      }
    });

    it('changing credentials re-seals them; _audit names them, never their values', async () => {
      const path = of(acme, `/${splunk.id}`);
      const token = 'splunk-token-new-9a8b7c6d';
      const value = 'header-value-new-2b4d6f';
      credentials.push(token, value);
      const res = await as(ADMIN_KEYS.acmeAdmin)
        .patch(path, { token, headers: { 'X-Other': value }, index: 'main' })
        .expect(200);
      for (const c of credentials) expect(JSON.stringify(res.body)).not.toContain(c);
      expect(await opened(splunk.id)).toEqual({ token, headers: { 'X-Other': value } });
      expect((await rowOf(splunk.id)).options).toEqual({ sourcetype: 'audit', index: 'main' });
      expect((await lastAudit())!.context).toEqual({ index: 'main', headers: ['X-Other'], credentials: ['token'] });
    });
  });

  describe('controls', () => {
    const version = async () => (await rowOf(webhook.id)).version as number;

    it('pause, then resume (again: unchanged); each in _audit and moving the version on', async () => {
      const path = of(acme, `/${webhook.id}`);
      const v0 = await version();
      expect((await as(ADMIN_KEYS.acmeAdmin).post(`${path}/pause`).expect(200)).body.data.state).toBe('paused');
      expect(await version()).toBe(v0 + 1);
      expect(await lastAudit()).toMatchObject({ action: 'destination.paused', resource: webhook.id });
      const audited = (await auditEvents(KEYS.acme)).length;
      await as(ADMIN_KEYS.acmeAdmin).post(`${path}/pause`).expect(200);
      expect(await version()).toBe(v0 + 1);
      expect(await auditEvents(KEYS.acme)).toHaveLength(audited);
      expect((await as(ADMIN_KEYS.acmeAdmin).post(`${path}/resume`).expect(200)).body.data.state).toBe('active');
      expect(await version()).toBe(v0 + 2);
      expect(await lastAudit()).toMatchObject({ action: 'destination.resumed', context: { from: 'paused' } });
    });

    it('resume also brings back a disabled destination: retrying, its backoff kept, the pause-after-hours clock restarted', async () => {
      const error = { at: new Date().toISOString(), status: 410, message: '410 Gone' };
      // Resumed a minute ago at the latest (the test before resumed it a moment ago: one resume a minute).
      await sql(
        `UPDATE destinations SET state = 'disabled', consecutive_failures = 4, failing_since = now(), last_error = $2,
                retry_at = now() + interval '1 minute', resumed_at = now() - interval '61 seconds'
          WHERE id = $1`,
        [webhook.id, error],
      );
      const disabled = (
        await as(ADMIN_KEYS.acmeAdmin)
          .get(of(acme, `/${webhook.id}`))
          .expect(200)
      ).body.data;
      expect(disabled).toMatchObject({ state: 'disabled', consecutiveFailures: 4, lastError: error });
      const resumed = (
        await as(ADMIN_KEYS.acmeAdmin)
          .post(of(acme, `/${webhook.id}/resume`))
          .expect(200)
      ).body.data;
      expect(resumed).toMatchObject({ state: 'retrying', consecutiveFailures: 4, lastError: error });
      const row = await rowOf(webhook.id);
      expect(row.failing_since).toBeNull();
      expect((row.retry_at as Date).getTime()).toBeGreaterThan(Date.now() + 30_000);
    });

    it('replay moves the position to `from`, keeps the state, and is recorded', async () => {
      const path = of(acme, `/${splunk.id}`);
      await as(ADMIN_KEYS.acmeAdmin).post(`${path}/pause`).expect(200);
      const future = new Date(Date.now() + 3_600_000).toISOString();
      for (const body of [{}, { from: 'yesterday' }, { from: future }, { from: null }]) {
        const res = await as(ADMIN_KEYS.acmeAdmin).post(`${path}/replay`, body).expect(400);
        expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain('from');
      }
      const before = (await rowOf(splunk.id)).version as number;
      const from = '2026-11-01T00:00:00.000Z';
      const replayed = (await as(ADMIN_KEYS.acmeAdmin).post(`${path}/replay`, { from }).expect(200)).body.data;
      expect(replayed.state).toBe('paused');
      const row = await rowOf(splunk.id);
      expect(row.version).toBe(before + 1);
      expect(row.position).toEqual({ since: '1:1:', until: null, after: { time: from, chainId: '', position: 0 } });
      expect(await lastAudit()).toMatchObject({ action: 'destination.replayed', context: { from } });
    });

    it('rotate-secret: a new secret once, the old one kept 24 hours; 409 for a kind without one', async () => {
      const path = of(acme, `/${webhook.id}`);
      const res = await as(ADMIN_KEYS.acmeAdmin).post(`${path}/rotate-secret`).expect(200);
      const secret = res.body.data.secret as string;
      credentials.push(secret);
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
      expect(secret).not.toBe(webhookSecret);
      const { webhookSecrets } = (await opened(webhook.id)) as {
        webhookSecrets: { secret: string; until: string | null }[];
      };
      expect(webhookSecrets.map((s) => s.secret)).toEqual([secret, webhookSecret]);
      expect(webhookSecrets[0]!.until).toBeNull();
      expect(Date.parse(webhookSecrets[1]!.until!) - Date.now()).toBeGreaterThan(24 * 3600_000 - 60_000);
      expect(await lastAudit()).toMatchObject({ action: 'destination.changed', context: { rotated: 'secret' } });
      const refused = await as(ADMIN_KEYS.acmeAdmin)
        .post(of(acme, `/${splunk.id}/rotate-secret`))
        .expect(409);
      expect(refused.body.error.code).toBe('CONFLICT');
    });

    it('credentials that no longer open (another key, another row) are given again, not a 500', async () => {
      const moved = (
        await as(ADMIN_KEYS.acmeAdmin)
          .post(of(acme), { ...WEBHOOK, name: 'moved' })
          .expect(201)
      ).body.data;
      credentials.push(moved.secret);
      // Another row's sealed value: its additional data (the id) does not match, as with a changed SECRETS_KEY.
      await sql(`UPDATE destinations SET secrets = (SELECT secrets FROM destinations WHERE id = $2) WHERE id = $1`, [
        moved.id,
        webhook.id,
      ]);
      const res = await as(ADMIN_KEYS.acmeAdmin)
        .post(of(acme, `/${moved.id}/rotate-secret`))
        .expect(200);
      credentials.push(res.body.data.secret);
      expect(await opened(moved.id)).toEqual({
        webhookSecrets: [{ secret: res.body.data.secret, until: null }],
        headers: {},
      });
      await as(ADMIN_KEYS.acmeAdmin)
        .delete(of(acme, `/${moved.id}`))
        .expect(200);
    });
  });

  describe('the limit', () => {
    it(`at most ${LIMIT} per account (409 CONFLICT), also for two creates at once`, async () => {
      const initech = (await as(ADMIN_KEYS.operator).post('/v1/accounts', { name: 'initech' }).expect(201)).body.data
        .id;
      const made: string[] = [];
      for (let i = 0; i < LIMIT; i++) {
        const res = await as(ADMIN_KEYS.operator)
          .post(of(initech), { ...WEBHOOK, name: `w${i}` })
          .expect(201);
        credentials.push(res.body.data.secret);
        made.push(res.body.data.id);
      }
      const over = await as(ADMIN_KEYS.operator).post(of(initech), WEBHOOK).expect(409);
      expect(over.body.error).toMatchObject({ code: 'CONFLICT', details: { limit: LIMIT } });
      await as(ADMIN_KEYS.operator)
        .delete(of(initech, `/${made[0]}`))
        .expect(200);
      const both = await Promise.all(
        [1, 2].map((i) => as(ADMIN_KEYS.operator).post(of(initech), { ...WEBHOOK, name: `race${i}` })),
      );
      expect(both.map((r) => r.status).sort()).toEqual([201, 409]);
      credentials.push(...both.map((r) => r.body.data?.secret as string).filter(Boolean));
      const { n } = (
        await sql(`SELECT count(*)::int AS n FROM destinations WHERE account_id = audit_ulid_uuid($1)`, [initech])
      )[0]!;
      expect(n).toBe(LIMIT);
    });
  });

  describe('delete', () => {
    it('answers the destination as it was, then it is gone; recorded', async () => {
      const made = (
        await as(ADMIN_KEYS.acmeAdmin)
          .post(of(acme), { ...WEBHOOK, name: 'doomed' })
          .expect(201)
      ).body.data;
      credentials.push(made.secret);
      const { secret: _secret, ...view } = made;
      const gone = (
        await as(ADMIN_KEYS.acmeAdmin)
          .delete(of(acme, `/${made.id}`))
          .expect(200)
      ).body.data;
      expect(gone).toEqual(view);
      await as(ADMIN_KEYS.acmeAdmin)
        .get(of(acme, `/${made.id}`))
        .expect(404);
      await as(ADMIN_KEYS.acmeAdmin)
        .delete(of(acme, `/${made.id}`))
        .expect(404);
      expect(await lastAudit()).toMatchObject({
        action: 'destination.deleted',
        resource: made.id,
        context: { name: 'doomed', kind: 'webhook' },
      });
    });
  });

  describe('credentials never show again', () => {
    it('not in any answer since, nor in _audit, the logs, or any stored row as text', async () => {
      expect(credentials.length).toBeGreaterThanOrEqual(8);
      const audit = JSON.stringify(await auditEvents(KEYS.acme));
      const list = JSON.stringify((await as(ADMIN_KEYS.acmeAdmin).get(of(acme)).expect(200)).body);
      expect(audit).toContain('destination.created');
      expect(logs.lines.length).toBeGreaterThan(0);
      for (const c of credentials) {
        expect(audit).not.toContain(c);
        expect(list).not.toContain(c);
        expect(logs.text).not.toContain(c);
        expect(await rowsContaining((q, p) => t.dataSource.query(q, p), c)).toEqual([]);
      }
    });

    it('the sealed column holds none of their bytes', async () => {
      const rows = (await sql(`SELECT id, secrets FROM destinations`)) as { id: string; secrets: Buffer }[];
      for (const { secrets } of rows)
        for (const c of credentials) {
          expect(secrets.includes(Buffer.from(c, 'utf8'))).toBe(false);
          if (c.startsWith('whsec_')) expect(secrets.includes(Buffer.from(c.slice(6), 'base64'))).toBe(false);
        }
    });
  });
});
