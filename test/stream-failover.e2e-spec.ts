import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { ADMIN_KEYS, adminBootstrapKeys } from './support/admin-keys';
import { startChildInstance } from './support/child-instance';
import { bearer, freshDatabase, KEYS, usingPostgres } from './support/test-app';
import { eventually, WebhookReceiver } from './support/webhook-receiver';

/** Two instances on one PostgreSQL database: a second process needs a server to share (the embedded one is in-process). */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;

/**
 * Streams across instances (docs/contract.md §16): one destination is delivered by one instance at a time
 * (a lease in the database); when that instance is killed with SIGKILL mid-delivery, the other takes
 * the lease over within 30 s and resumes from the last acknowledged position: every event arrives,
 * each chain in position order, duplicates only from the batch in flight, and counted.
 */
describeOnPostgres('Streams: failover between two instances (PostgreSQL)', () => {
  const receiver = new WebhookReceiver();
  const apiKeys = adminBootstrapKeys()
    .map((k) => `${k.account}:${k.key}:${k.scopes.join('+')}`)
    .join(',');

  beforeAll(() => receiver.start());
  afterAll(() => receiver.stop());

  it('the delivering instance is killed mid-delivery; the other takes over and nothing is lost', async () => {
    const database = await freshDatabase();
    const env = {
      DATABASE_URL: database.url!,
      API_KEYS: apiKeys,
      RATE_LIMIT_PER_SECOND: '0',
      STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
      STREAM_LEASE_SECONDS: '2',
      METRICS_PORT: '0',
      // Instances sharing a database share the key of its stored credentials.
      SECRETS_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
    };
    const first = await startChildInstance(env);
    let second: Awaited<ReturnType<typeof startChildInstance>> | null = null;
    let firstAlive = true;
    const db = new Client({ connectionString: database.url! });
    await db.connect();
    const leaseOwner = async () =>
      ((await db.query(`SELECT lease_owner FROM destinations`)).rows as { lease_owner: string | null }[])[0]
        ?.lease_owner;
    try {
      const call = (url: string, key: string, method: string, path: string, body?: unknown) =>
        fetch(`${url}${path}`, {
          method,
          headers: { 'Content-Type': 'application/json', Authorization: bearer(key)[1] },
          body: body === undefined ? undefined : JSON.stringify(body),
        }).then(async (res) => ({ status: res.status, body: (await res.json()) as { data: Record<string, unknown> } }));
      const me = await call(first.url, KEYS.acme, 'GET', '/v1/me');
      const accountId = me.body.data.accountId as string;
      // Created while the first instance is the only one: it holds the lease.
      const made = await call(first.url, ADMIN_KEYS.acmeAdmin, 'POST', `/v1/accounts/${accountId}/destinations`, {
        name: 'failover',
        kind: 'webhook',
        url: receiver.url,
        batchSize: 10,
        q: 'actor:failover',
      });
      expect(made.status).toBe(201);
      receiver.secrets = [made.body.data.secret as string];
      // The first instance holds the lease; the second starts now (however long that takes on a loaded
      // machine) and waits: a lease that its holder renews is never taken.
      await eventually(async () => expect(await leaseOwner()).toBeTruthy(), 30_000);
      const delivering = await leaseOwner();
      second = await startChildInstance(env);
      // The receiver answers slowly: the kill comes while batches are in flight.
      receiver.delayMs = 500;
      const ids: string[] = [];
      for (let round = 0; round < 4; round++) {
        const events = Array.from({ length: 100 }, (_, i) => ({
          actor: 'failover',
          action: 'doc.update',
          resource: `doc:${round}-${i}`,
          chain: `failover-${i % 3}`,
        }));
        const res = await call(first.url, KEYS.acme, 'POST', '/v1/events/batch', { events });
        expect(res.status).toBe(201);
        ids.push(...(res.body.data as unknown as { id: string }[]).map((e) => e.id));
      }
      await eventually(() => expect(receiver.acknowledged.length).toBeGreaterThan(20), 30_000);
      expect(await leaseOwner()).toBe(delivering);
      const before = receiver.deduplicated().ids.length;
      await first.kill();
      firstAlive = false;
      expect(before).toBeLessThan(ids.length);
      await eventually(() => expect(receiver.deduplicated().ids.sort()).toEqual([...ids].sort()), 60_000);
      // The second instance took the lease over.
      expect(await leaseOwner()).not.toBe(delivering);
      // Each chain in position order, counting first receipts only.
      const last = new Map<string, number>();
      const seen = new Set<string>();
      for (const batch of receiver.batches.filter((b) => b.status === 200))
        for (const event of batch.events) {
          if (seen.has(event.id)) continue;
          seen.add(event.id);
          expect(event.chain.position).toBeGreaterThan(last.get(event.chain.id) ?? 0);
          last.set(event.chain.id, event.chain.position);
        }
      const { duplicates } = receiver.deduplicated();
      // At most the batches in flight at the kill come twice.
      expect(duplicates).toBeLessThanOrEqual(2 * 10);
      process.stdout.write(`failover: ${ids.length} events, ${duplicates} delivered twice\n`);
    } finally {
      if (firstAlive) await first.stop();
      await second?.stop();
      await db.end();
    }
  }, 150_000);
});
