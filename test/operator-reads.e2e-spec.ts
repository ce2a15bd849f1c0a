import { request as httpRequest, IncomingMessage } from 'node:http';
import { AddressInfo } from 'node:net';
import type { EventView } from '../apps/api/src/events/dto/event.view';
import { BoundedReads } from '../apps/api/src/reads/bounded-reads';
import { ADMIN_KEYS, adminBootstrapKeys } from './support/admin-keys';
import { bearer, freshDatabase, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';

const describeOnPostgres = usingPostgres() ? describe : describe.skip;

/** An account id of the right form that names no account. */
const NO_ACCOUNT = 'acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D2';

/** An answer without its time of verification (a whole-chain verification's `verifiedAt`). */
const withoutVerifiedAt = (body: { data: object }): object => ({ ...body.data, verifiedAt: null });

/** What a tenant sees of the operator reads in its `_audit` chain. */
interface AuditEntry {
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
}

/** Operator reads of an account (docs/contract.md §12): `accountId` on the read routes, each read on the account's record. */
describe('operator reads of an account', () => {
  let t: TestApp;
  let acme: string;
  let globex: string;
  let system: string;
  let operatorKeyId: string;
  /** acme's events of the chain `orders`, oldest first, and globex's one. */
  let orders: EventView[];
  let globexEvent: EventView;
  /** A second operator key, and a key of acme with admin and read. */
  let operator2: { id: string; secret: string };
  let acmeAdminReader: string;

  const get = (path: string, key: string, query: Record<string, string | string[] | number> = {}) =>
    t
      .http()
      .get(path)
      .query(query)
      .set(...bearer(key));
  const asOperator = (path: string, query: Record<string, string | number> = {}, key: string = ADMIN_KEYS.operator) =>
    get(path, key, { accountId: acme, ...query });
  const append = async (key: string, body: object): Promise<EventView> =>
    (
      await t
        .http()
        .post('/v1/events')
        .set(...bearer(key))
        .send(body)
        .expect(201)
    ).body.data as EventView;
  /** The operator.read entries of an account's `_audit`, as its own key reads them. */
  const operatorReadsSeenBy = async (key: string): Promise<AuditEntry[]> =>
    (await get('/v1/events', key, { q: 'chain:_audit action:operator.read', limit: 200 }).expect(200)).body
      .data as AuditEntry[];

  beforeAll(async () => {
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys() });
    const me = async (key: string) => (await get('/v1/me', key).expect(200)).body.data as Record<string, string>;
    acme = (await me(KEYS.acme)).accountId!;
    globex = (await me(KEYS.globex)).accountId!;
    const op = await me(ADMIN_KEYS.operator);
    system = op.accountId!;
    operatorKeyId = op.keyId!;
    orders = [];
    for (const n of [1, 2, 3])
      orders.push(await append(KEYS.acme, { actor: `alice-${n}`, action: 'order.placed', chain: 'orders' }));
    globexEvent = await append(KEYS.globex, { actor: 'bob', action: 'order.placed', chain: 'orders' });
    const made = await t
      .http()
      .post(`/v1/accounts/${system}/keys`)
      .set(...bearer(ADMIN_KEYS.operator))
      .send({ name: 'second-operator', scopes: ['operator'] })
      .expect(201);
    operator2 = { id: made.body.data.id as string, secret: made.body.data.secret as string };
    acmeAdminReader = (
      await t
        .http()
        .post(`/v1/accounts/${acme}/keys`)
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .send({ name: 'admin-reader', scopes: ['read', 'admin'] })
        .expect(201)
    ).body.data.secret as string;
  });
  afterAll(async () => {
    await t.close();
  });

  it('records a read in the account’s _audit as operator.read: the key as actor, the route pattern, never a value of the query', async () => {
    expect(await operatorReadsSeenBy(KEYS.acme)).toEqual([]);
    await asOperator('/v1/events', { q: 'context.pin:4821 actor:"zoe@example.com"', actor: 'zoe@example.com' }).expect(
      200,
    );
    const entries = await operatorReadsSeenBy(KEYS.acme);
    expect(entries).toEqual([
      expect.objectContaining({
        actor: `key:${operatorKeyId}`,
        action: 'operator.read',
        resource: null,
        context: { route: 'GET /v1/events' },
      }),
    ]);
    expect(JSON.stringify(entries)).not.toMatch(/4821|zoe/);
  });

  it('reads the account’s events, search, export and statistics as its own key does', async () => {
    const list = (await asOperator('/v1/events').expect(200)).body.data as EventView[];
    expect(list).toEqual((await get('/v1/events', KEYS.acme).expect(200)).body.data);
    expect(list.map((e) => e.id)).toEqual(expect.arrayContaining(orders.map((e) => e.id)));
    expect(list.map((e) => e.id)).not.toContain(globexEvent.id);

    const q = { q: 'chain:orders action:order.placed' };
    const found = (await asOperator('/v1/events', q).expect(200)).body.data as EventView[];
    expect(found.map((e) => e.id)).toEqual(orders.map((e) => e.id).reverse());

    const period = {
      after: new Date(Date.now() - 86_400_000).toISOString(),
      before: new Date(Date.now() + 60_000).toISOString(),
    };
    const exported = await asOperator('/v1/events/export', { format: 'json', ...period, ...q }).expect(200);
    expect((exported.body.data as { id: string }[]).map((e) => e.id)).toEqual(orders.map((e) => e.id));

    const stats = await asOperator('/v1/stats/events', { group_by: 'action', ...period, ...q }).expect(200);
    expect(stats.body).toEqual({ data: [{ key: 'order.placed', count: 3 }], total: 3 });
  });

  it('reads the account’s chains, statuses, verifications, proofs, checkpoints and events by id as its own key does', async () => {
    const chainId = orders[0]!.chain.id;
    const event = orders[1]!;
    const chains = (await asOperator('/v1/chains').expect(200)).body.data as { id: string; name: string }[];
    expect(chains.map((c) => c.name).sort()).toEqual(['_audit', 'orders']);
    for (const path of [
      `/v1/chain/${chainId}/status`,
      `/v1/chain/${chainId}/verify`,
      `/v1/chain/${chainId}/consistency?from=1&to=3`,
      `/v1/events/${event.id}`,
      `/v1/events/${event.id}/verify`,
      `/v1/events/${event.id}/proof`,
    ]) {
      const own = await get(path, KEYS.acme).expect(200);
      const operator = await asOperator(path).expect(200);
      expect({ path, body: withoutVerifiedAt(operator.body) }).toEqual({ path, body: withoutVerifiedAt(own.body) });
    }
    const checkpoint = await asOperator(`/v1/chain/${chainId}/checkpoint`).expect(200);
    expect(checkpoint.text).toEqual((await get(`/v1/chain/${chainId}/checkpoint`, KEYS.acme).expect(200)).text);
    const witnessed = await get(`/v1/chain/${chainId}/checkpoint/witnessed`, KEYS.acme);
    await asOperator(`/v1/chain/${chainId}/checkpoint/witnessed`).expect(witnessed.status);
  });

  it('pages with the account’s cursor, refused for any other account', async () => {
    const first = await asOperator('/v1/events', { limit: 1 }).expect(200);
    const cursor = first.body.nextCursor as string;
    expect(cursor).toEqual(expect.any(String));
    const next = await asOperator('/v1/events', { limit: 1, cursor }).expect(200);
    const own = await get('/v1/events', KEYS.acme, { limit: 2 }).expect(200);
    expect([...first.body.data, ...next.body.data]).toEqual(own.body.data);
    await get('/v1/events', ADMIN_KEYS.operator, { limit: 1, cursor }).expect(400);
    await get('/v1/events', ADMIN_KEYS.operator, { limit: 1, cursor, accountId: globex }).expect(400);
    const chainsPage = await asOperator('/v1/chains', { limit: 1 }).expect(200);
    await get('/v1/chains', ADMIN_KEYS.operator, { limit: 1, cursor: chainsPage.body.nextCursor as string }).expect(
      400,
    );
  });

  it('streams the account’s events, and only them', async () => {
    await t.app.listen(0, '127.0.0.1');
    const port = (t.app.getHttpServer().address() as AddressInfo).port;
    const received: string[] = [];
    const stream = await new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpRequest(`http://127.0.0.1:${port}/v1/events/stream?accountId=${acme}`, {
        headers: { Authorization: `Bearer ${ADMIN_KEYS.operator}` },
      });
      req.on('response', resolve).on('error', reject).end();
    });
    expect(stream.statusCode).toBe(200);
    stream.setEncoding('utf8');
    let text = '';
    const opened = new Promise<void>((resolve) =>
      stream.on('data', (chunk: string) => {
        text += chunk;
        if (text.includes(': stream open')) resolve();
        for (const [, data] of text.matchAll(/^data: (.*)$/gm)) if (!received.includes(data!)) received.push(data!);
      }),
    );
    await opened;
    await append(KEYS.globex, { actor: 'not-acme', action: 'order.placed', chain: 'orders' });
    const sent = await append(KEYS.acme, { actor: 'alice-stream', action: 'order.placed', chain: 'orders' });
    const deadline = Date.now() + 10_000;
    while (received.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 300));
    stream.destroy();
    expect(received.map((data) => (JSON.parse(data) as EventView).id)).toEqual([sent.id]);
  });

  it('reads its own account without accountId, as before', async () => {
    const chains = (await get('/v1/chains', ADMIN_KEYS.operator).expect(200)).body.data as { name: string }[];
    expect(chains.map((c) => c.name)).not.toContain('orders');
    const events = (await get('/v1/events', ADMIN_KEYS.operator).expect(200)).body.data as EventView[];
    expect(events.map((e) => e.id)).not.toContain(orders[0]!.id);
    await get(`/v1/events/${orders[0]!.id}`, ADMIN_KEYS.operator).expect(404);
    await get(`/v1/chain/${orders[0]!.chain.id}/status`, ADMIN_KEYS.operator).expect(404);
    // Naming its own account is reading it: not an operator's read of a tenant, so not recorded.
    await get('/v1/chains', ADMIN_KEYS.operator, { accountId: system }).expect(200);
    const ownAudit = (
      await get('/v1/events', ADMIN_KEYS.operator, { q: 'chain:_audit action:operator.read' }).expect(200)
    ).body.data as AuditEntry[];
    expect(ownAudit).toEqual([]);
  });

  it('answers 404 for an account that does not exist, and for another account’s ids (tenancy)', async () => {
    for (const path of ['/v1/events', '/v1/chains', '/v1/events/stream', `/v1/events/${orders[0]!.id}`]) {
      const res = await get(path, ADMIN_KEYS.operator, { accountId: NO_ACCOUNT }).expect(404);
      expect({ path, code: res.body.error.code }).toEqual({ path, code: 'NOT_FOUND' });
    }
    const event = orders[0]!;
    const chainId = event.chain.id;
    for (const path of [
      `/v1/events/${event.id}`,
      `/v1/events/${event.id}/verify`,
      `/v1/events/${event.id}/proof`,
      `/v1/chain/${chainId}/status`,
      `/v1/chain/${chainId}/verify`,
      `/v1/chain/${chainId}/consistency?from=1&to=1`,
      `/v1/chain/${chainId}/checkpoint`,
    ]) {
      const res = await get(path, ADMIN_KEYS.operator, { accountId: globex }).expect(404);
      expect({ path, code: res.body.error.code }).toEqual({ path, code: 'NOT_FOUND' });
    }
    const q = await get('/v1/events', ADMIN_KEYS.operator, { accountId: globex, chain_id: chainId }).expect(200);
    expect(q.body.data).toEqual([]);
  });

  it('refuses a malformed or hostile accountId with 400 naming it', async () => {
    const raw = [
      '',
      'acme',
      'acc_x',
      `${acme}%20`,
      `${acme}%00`,
      '%00',
      '%ED%A0%80',
      `acc_%ED%A0%80${acme.slice(5)}`,
      acme.toLowerCase(),
      `${acme}&accountId=${acme}`,
      'x'.repeat(10_000),
    ];
    for (const value of raw) {
      const res = await t
        .http()
        .get(`/v1/events?accountId=${value}`)
        .set(...bearer(ADMIN_KEYS.operator))
        .expect(400);
      // What is no valid UTF-8 or holds U+0000 is refused by the one check for every string (§8) first.
      expect({ value: value.slice(0, 40), fields: res.body.error.details.fields }).toEqual({
        value: value.slice(0, 40),
        fields: [
          {
            field: 'accountId',
            message: expect.stringMatching(
              /^accountId (must be one account id \(acc_ and a ULID\)|must not contain the NUL character|is not valid percent-encoded UTF-8)/,
            ),
          },
        ],
      });
    }
  });

  it('refuses accountId from any key but an operator’s, even naming its own account, with 400', async () => {
    for (const [key, accountId] of [
      [acmeAdminReader, acme],
      [acmeAdminReader, globex],
      [KEYS.acmeReadOnly, acme],
      [KEYS.acme, globex],
      [KEYS.globex, acme],
    ] as const) {
      for (const path of ['/v1/events', '/v1/chains', `/v1/events/${orders[0]!.id}`, '/v1/stats/events']) {
        const res = await get(path, key, { accountId }).expect(400);
        expect({ path, fields: res.body.error.details.fields }).toEqual({
          path,
          fields: [{ field: 'accountId', message: expect.stringContaining('operator') }],
        });
      }
    }
  });

  it('takes accountId on the read routes only: anywhere else it is an unknown parameter', async () => {
    const me = await get('/v1/me', ADMIN_KEYS.operator, { accountId: acme }).expect(400);
    expect(me.body.error.details.fields).toEqual([{ field: 'accountId', message: "unknown field 'accountId'" }]);
    await get('/v1/witnesses', ADMIN_KEYS.operator, { accountId: acme }).expect(400);
    await t
      .http()
      .post('/v1/events')
      .query({ accountId: acme })
      .set(...bearer(KEYS.acme))
      .send({ actor: 'a', action: 'b' })
      .expect(400);
  });

  it('records once an hour per key and account, whatever the reads and however many at once; a second key gets its own entry', async () => {
    await Promise.all(Array.from({ length: 50 }, () => asOperator('/v1/chains').expect(200)));
    for (let i = 0; i < 20; i++) await asOperator(`/v1/events/${orders[0]!.id}/verify`).expect(200);
    expect(await operatorReadsSeenBy(KEYS.acme)).toHaveLength(1);

    await Promise.all(Array.from({ length: 20 }, () => asOperator('/v1/chains', {}, operator2.secret).expect(200)));
    const entries = await operatorReadsSeenBy(KEYS.acme);
    expect(entries.map((e) => [e.actor, e.context])).toEqual([
      [`key:${operator2.id}`, { route: 'GET /v1/chains' }],
      [`key:${operatorKeyId}`, { route: 'GET /v1/events' }],
    ]);
    // globex was read (404s above) only with ids of another account: reads all the same, on its record.
    expect((await operatorReadsSeenBy(KEYS.globex)).map((e) => e.actor)).toEqual([`key:${operatorKeyId}`]);
  });

  it('counts an operator’s bounded reads against the account read (READS_PER_ACCOUNT)', async () => {
    const reads = t.app.get(BoundedReads);
    const slots = Array.from({ length: t.config.readsPerAccount }, () => reads.take(acme));
    try {
      await asOperator('/v1/events').expect(429);
      await asOperator('/v1/stats/events', {
        group_by: 'action',
        after: '2000-01-01T00:00:00Z',
        before: '2001-01-01T00:00:00Z',
      }).expect(429);
      await get('/v1/events', ADMIN_KEYS.operator).expect(200);
      await get('/v1/events', ADMIN_KEYS.operator, { accountId: globex }).expect(200);
    } finally {
      for (const slot of slots) slot.release();
    }
    await asOperator('/v1/events').expect(200);
  });
});

/** The hour is decided in the database: instances sharing it record one entry between them. */
describeOnPostgres('operator reads on two instances sharing a database', () => {
  let first: TestApp;
  let second: TestApp;
  beforeAll(async () => {
    const database = await freshDatabase();
    first = await startTestApp({ bootstrapKeys: adminBootstrapKeys() }, database);
    second = await startTestApp({ bootstrapKeys: adminBootstrapKeys() }, database);
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('records one operator.read between them, at once and one after the other', async () => {
    const acme = (
      await first
        .http()
        .get('/v1/me')
        .set(...bearer(KEYS.acme))
        .expect(200)
    ).body.data.accountId as string;
    const read = (t: TestApp) =>
      t
        .http()
        .get('/v1/chains')
        .query({ accountId: acme })
        .set(...bearer(ADMIN_KEYS.operator))
        .expect(200);
    await Promise.all(Array.from({ length: 10 }, (_, i) => read(i % 2 === 0 ? first : second)));
    await read(second);
    await read(first);
    const entries = await first
      .http()
      .get('/v1/events')
      .query({ q: 'chain:_audit action:operator.read' })
      .set(...bearer(KEYS.acme))
      .expect(200);
    expect(entries.body.data).toHaveLength(1);
  });
});
