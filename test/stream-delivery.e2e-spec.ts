import { ADMIN_KEYS, adminBootstrapKeys } from './support/admin-keys';
import { CapturedLogs, capturingLogs } from './support/captured-logs';
import { bearer, freshDatabase, KEYS, startTestApp, TestApp } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';
import { AppModule } from '../apps/api/src/app.module';
import { Metrics } from '@app/common';

/**
 * Streams' delivery engine (docs/contract.md §16) against a real Standard Webhooks receiver on this machine:
 * every event delivered at least once, each chain in position order, retries with the same batch id
 * through 500, 429 + Retry-After, timeouts and refused connections, 410, pause/resume, replay, a
 * restart, and a prune that passes an undelivered position (destination.gap). Secrets never leave.
 */
describe('Streams: delivery', () => {
  let t: TestApp;
  const logs = new CapturedLogs();
  const receiver = new WebhookReceiver();
  let database: { url: string | null; dataDir: string };
  const settings = {
    bootstrapKeys: adminBootstrapKeys(),
    streamAllowPrivateNetworks: true,
    streamLeaseSeconds: 1,
    streamPollMilliseconds: 50,
    retentionSweepSeconds: 0,
    logLevel: 'info' as const,
  };

  beforeAll(async () => {
    database = await freshDatabase();
    t = await startTestApp(settings, database, AppModule, capturingLogs(logs));
    await receiver.start();
  });
  afterAll(async () => {
    await t.close();
    await receiver.stop();
  });

  const http = (key: string) => ({
    get: (path: string) =>
      t
        .http()
        .get(path)
        .set(...bearer(key)),
    post: (path: string, body?: object) =>
      t
        .http()
        .post(path)
        .set(...bearer(key))
        .send(body ?? {}),
    patch: (path: string, body: object) =>
      t
        .http()
        .patch(path)
        .set(...bearer(key))
        .send(body),
    del: (path: string) =>
      t
        .http()
        .delete(path)
        .set(...bearer(key)),
  });
  const admin = http(ADMIN_KEYS.acmeAdmin);

  let accountId = '';
  const destinations = () => `/v1/accounts/${accountId}/destinations`;

  beforeAll(async () => {
    accountId = ((await http(KEYS.acme).get('/v1/me').expect(200)).body as { data: { accountId: string } }).data
      .accountId;
  });

  interface Appended {
    id: string;
    chain: { id: string; position: number };
  }

  /** `perChain` events on each chain, by `actor` (each test's destinations match their own actor). */
  async function append(chains: string[], perChain: number, actor = 'drill'): Promise<Appended[]> {
    const events = chains.flatMap((chain) =>
      Array.from({ length: perChain }, (_, i) => ({ actor, action: 'doc.update', resource: `doc:${i}`, chain })),
    );
    const out: Appended[] = [];
    for (let i = 0; i < events.length; i += 1000) {
      const res = await http(KEYS.acme)
        .post('/v1/events/batch', { events: events.slice(i, i + 1000) })
        .expect(201);
      out.push(...(res.body as { data: Appended[] }).data);
    }
    return out;
  }

  interface Destination {
    id: string;
    state: string;
    deliveredEvents: number;
    consecutiveFailures: number;
    lastError: { status: number | null; message: string } | null;
    lagSeconds: number | null;
    secret?: string;
  }

  async function createWebhook(body: Record<string, unknown> = {}): Promise<Destination> {
    const res = await admin
      .post(destinations(), {
        name: 'drill',
        kind: 'webhook',
        url: receiver.url,
        q: 'actor:drill',
        batchSize: 50,
        timeoutSeconds: 1,
        ...body,
      })
      .expect(201);
    const made = (res.body as { data: Destination }).data;
    receiver.secrets = [made.secret!];
    return made;
  }

  const read = async (id: string): Promise<Destination> =>
    ((await admin.get(`${destinations()}/${id}`).expect(200)).body as { data: Destination }).data;

  /** Each chain's acknowledged positions are in order: never an earlier position after a later one (first receipts). */
  function expectChainsInOrder(): void {
    const seen = new Set<string>();
    const last = new Map<string, number>();
    for (const batch of receiver.batches.filter((b) => b.status === 200)) {
      for (const event of batch.events) {
        if (seen.has(event.id)) continue;
        seen.add(event.id);
        expect(event.chain.position).toBeGreaterThan(last.get(event.chain.id) ?? 0);
        last.set(event.chain.id, event.chain.position);
      }
    }
  }

  const reset = () => {
    receiver.batches.length = 0;
    receiver.answers.length = 0;
  };

  it('delivers every event appended after creation, signed, in batches, each chain in position order', async () => {
    reset();
    await append(['drill-before'], 5);
    const destination = await createWebhook();
    const appended = await append(['drill-a', 'drill-b'], 120);
    await append(['drill-a'], 20, 'someone-else');
    const wanted = appended.length;
    await eventually(() => expect(receiver.deduplicated().ids.sort()).toEqual(appended.map((e) => e.id).sort()));
    expect(receiver.batches.every((b) => b.verified)).toBe(true);
    expect(Math.max(...receiver.batches.map((b) => b.eventIds.length))).toBeLessThanOrEqual(50);
    expectChainsInOrder();
    await eventually(async () => {
      const now = await read(destination.id);
      expect(now).toMatchObject({ state: 'active', deliveredEvents: wanted, consecutiveFailures: 0, lagSeconds: 0 });
    });
    const scrape = (await t.app.get(Metrics).scrape()).text;
    expect(scrape).toMatch(/audit_stream_delivered_events_total\{kind="webhook"\} \d+/);
    expect(scrape).toMatch(/audit_stream_destinations\{state="active"\} 1/);
    expect(scrape).not.toContain(destination.id);
    await admin.del(`${destinations()}/${destination.id}`).expect(200);
  });

  it('retries through a timeout, refused connections, 500 and 429 + Retry-After, with the same webhook-id, losing nothing', async () => {
    reset();
    const destination = await createWebhook();
    receiver.answers.push('hang');
    const appended = await append(['drill-retry'], 30);
    // The first attempt gets no answer within timeoutSeconds (1 s).
    await eventually(async () => expect((await read(destination.id)).lastError?.message).toMatch(/timed out/));
    // Then the receiver is gone: connections refused.
    await receiver.stop();
    await eventually(async () => {
      const now = await read(destination.id);
      expect(now).toMatchObject({ state: 'retrying', lastError: { status: null } });
      expect(now.consecutiveFailures).toBeGreaterThanOrEqual(2);
      expect(now.lastError?.message).not.toMatch(/timed out/);
    });
    // Back, but refusing twice more, saying when to come back.
    receiver.answers.push(
      { status: 500, headers: { 'Retry-After': '1' } },
      { status: 429, headers: { 'Retry-After': '1' } },
    );
    await receiver.start();
    await eventually(() => expect(receiver.deduplicated().ids).toEqual(appended.map((e) => e.id)), 30_000);
    expect(receiver.batches.map((b) => b.status)).toEqual([0, 500, 429, 200]);
    // Every attempt carried the same batch under the same id.
    expect(new Set(receiver.batches.map((b) => b.webhookId)).size).toBe(1);
    expect(new Set(receiver.batches.map((b) => b.eventIds.join()))).toEqual(
      new Set([appended.map((e) => e.id).join()]),
    );
    await eventually(async () =>
      expect(await read(destination.id)).toMatchObject({ state: 'active', consecutiveFailures: 0 }),
    );
    await admin.del(`${destinations()}/${destination.id}`).expect(200);
  }, 60_000);

  it('a 410 disables the destination and _audit says so; resume delivers again', async () => {
    reset();
    const destination = await createWebhook();
    receiver.answers.push({ status: 410 });
    const appended = await append(['drill-gone'], 3);
    await eventually(async () => expect((await read(destination.id)).state).toBe('disabled'));
    const audit = await http(KEYS.acme).get('/v1/events?q=action:destination.disabled').expect(200);
    expect((audit.body as { data: { resource: string }[] }).data.map((e) => e.resource)).toContain(destination.id);
    await admin.post(`${destinations()}/${destination.id}/resume`).expect(200);
    await eventually(() => expect(receiver.deduplicated().ids).toEqual(appended.map((e) => e.id)));
    await admin.del(`${destinations()}/${destination.id}`).expect(200);
  });

  it('pauses a destination that has failed for STREAM_PAUSE_AFTER_HOURS, and _audit says why', async () => {
    reset();
    const destination = await createWebhook();
    receiver.answers.push({ status: 503 });
    // As if its deliveries had been failing since three days ago (the default is 72 hours).
    await t.dataSource.query(`UPDATE destinations SET failing_since = now() - interval '73 hours' WHERE id = $1`, [
      destination.id,
    ]);
    await append(['drill-long'], 1);
    await eventually(async () => expect((await read(destination.id)).state).toBe('paused'));
    const audit = await http(KEYS.acme).get('/v1/events?q=action:destination.paused').expect(200);
    const entry = (
      audit.body as { data: { resource: string; actor: string; context: { reason: string } }[] }
    ).data.find((e) => e.resource === destination.id);
    expect(entry).toMatchObject({ actor: 'service:streams', context: { reason: 'deliveries failed for 72 hour(s)' } });
    await admin.del(`${destinations()}/${destination.id}`).expect(200);
  });

  it('holds events while paused and delivers them on resume; replay sends again from a time', async () => {
    reset();
    const destination = await createWebhook();
    await admin.post(`${destinations()}/${destination.id}/pause`).expect(200);
    const from = new Date().toISOString();
    const appended = await append(['drill-pause'], 20);
    await new Promise((done) => setTimeout(done, 1_500));
    expect(receiver.batches).toHaveLength(0);
    await admin.post(`${destinations()}/${destination.id}/resume`).expect(200);
    await eventually(() => expect(receiver.deduplicated().ids).toEqual(appended.map((e) => e.id)));
    reset();
    await admin.post(`${destinations()}/${destination.id}/replay`, { from }).expect(200);
    await eventually(() => expect(receiver.deduplicated().ids).toEqual(appended.map((e) => e.id)));
    await admin.del(`${destinations()}/${destination.id}`).expect(200);
  });

  it('resumes from its stored position after a restart, losing nothing', async () => {
    reset();
    const destination = await createWebhook({ batchSize: 10 });
    receiver.answers.push(...Array.from({ length: 5 }, () => ({ status: 200 })), 'hang');
    const appended = await append(['drill-restart'], 200);
    await eventually(() => expect(receiver.batches.length).toBeGreaterThanOrEqual(6));
    await t.close();
    t = await startTestApp(settings, database, AppModule, capturingLogs(logs));
    await eventually(() => expect(receiver.deduplicated().ids).toEqual(appended.map((e) => e.id)), 30_000);
    expectChainsInOrder();
    await admin.del(`${destinations()}/${destination.id}`).expect(200);
  }, 90_000);

  it('a prune that passes undelivered positions appends destination.gap, and delivery goes on after them', async () => {
    reset();
    const destination = await createWebhook({ start: 'beginning', q: 'chain:drill-prune' });
    await admin.post(`${destinations()}/${destination.id}/pause`).expect(200);
    const old = await append(['drill-prune'], 10);
    const chainId = old[0]!.chain.id;
    await t
      .http()
      .put(`/v1/chain/${chainId}/retention`)
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .send({ days: 1 })
      .expect(200);
    t.config.retentionClockOffsetSeconds = 2 * 86_400;
    try {
      await t
        .http()
        .post('/v1/retention/sweep')
        .set(...bearer(ADMIN_KEYS.operator))
        .expect(200);
    } finally {
      t.config.retentionClockOffsetSeconds = 0;
    }
    const gaps = await http(KEYS.acme).get('/v1/events?q=action:destination.gap').expect(200);
    const gap = (gaps.body as { data: { resource: string; context: Record<string, unknown> }[] }).data.find(
      (e) => e.resource === destination.id,
    );
    expect(gap?.context).toMatchObject({ chainId, skippedEvents: 10, skippedPositions: [[1, 10]] });
    const later = await append(['drill-prune'], 3);
    await admin.post(`${destinations()}/${destination.id}/resume`).expect(200);
    await eventually(() => expect(receiver.deduplicated().ids).toEqual(later.map((e) => e.id)));
    await admin.del(`${destinations()}/${destination.id}`).expect(200);
  });

  it('never writes a secret to the logs, the metrics or _audit', async () => {
    const destination = await createWebhook({ headers: { 'X-Receiver-Token': 'hdr-secret-value-42' } });
    await append(['drill-secret'], 2);
    await eventually(() => expect(receiver.batches.length).toBeGreaterThan(0));
    const audit = JSON.stringify((await http(KEYS.acme).get('/v1/events?q=chain:_audit&limit=200').expect(200)).body);
    const scrape = (await t.app.get(Metrics).scrape()).text;
    for (const secret of [destination.secret!, destination.secret!.slice(6), 'hdr-secret-value-42']) {
      expect(logs.text).not.toContain(secret);
      expect(scrape).not.toContain(secret);
      expect(audit).not.toContain(secret);
    }
    await admin.del(`${destinations()}/${destination.id}`).expect(200);
  });
});
