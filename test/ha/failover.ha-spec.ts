import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client } from 'pg';
import { ADMIN_KEYS, adminBootstrapKeys } from '../support/admin-keys';
import { freePort, startChildInstance } from '../support/child-instance';
import { KEYS } from '../support/test-app';
import { eventually, WebhookReceiver } from '../support/webhook-receiver';
import { HaCluster } from './cluster';
import { checkDelivery } from './delivery-check';
import { failoverImpact, FailoverImpact, IngestLoad } from './ingest-load';
import { TailReader } from './tail-reader';

type Instance = Awaited<ReturnType<typeof startChildInstance>>;

/** Concurrent clients of the load (half on each instance). */
const WORKERS = 8;
/** Load before each failover, and after the service answers 2xx again. */
const STEADY_MS = 4000;

const drillStarted = Date.now();
const say = (line: string) =>
  process.stdout.write(`[ha ${((Date.now() - drillStarted) / 1000).toFixed(1)} s] ${line}\n`);

/**
 * `npm run test:ha`, the drill of docs/contract.md §21: the service (two instances) on the HA
 * deployment of docker/ha/ built on this machine (test/ha/cluster.ts: etcd, three PostgreSQL 15
 * under Patroni with synchronous_mode, HAProxy), DATABASE_URL on HAProxy's read-write port and
 * DATABASE_READ_URL on its read-only port. Under ingest (single events and batches, 64 chains and a
 * hot chain, every request with an Idempotency-Key, retried as the contract asks), the leader's
 * PostgreSQL is killed with SIGKILL, then a planned switchover is made with patronictl. Afterwards:
 * every acknowledged event is stored once, every chain verifies with contiguous positions, clients
 * saw only 2xx and 503 + Retry-After, each request cut by a failover succeeded on its first retry
 * once its instance reached the new leader, and a live tail and a webhook destination got every
 * event, each chain in order. Then 1,000 appends each read back at once by id: never a 404.
 */
describe('HA drill: failovers under load (Patroni, etcd, HAProxy)', () => {
  let cluster: HaCluster;
  let instances: Instance[] = [];
  let metricsPorts: number[] = [];
  const receiver = new WebhookReceiver();
  let tail: TailReader;
  let load: IngestLoad;
  const impacts: { name: string; impact: FailoverImpact; promotedMs: number }[] = [];

  beforeAll(async () => {
    cluster = await HaCluster.start({ log: say });
    const admin = new Client({ connectionString: cluster.url('rw') });
    await admin.connect();
    await admin.query('CREATE DATABASE audit');
    await admin.end();
    await receiver.start();
    const env = {
      DATABASE_URL: cluster.url('rw', 'audit'),
      DATABASE_READ_URL: cluster.url('ro', 'audit'),
      API_KEYS: adminBootstrapKeys()
        .map((k) => `${k.account}:${k.key}:${k.scopes.join('+')}`)
        .join(','),
      RATE_LIMIT_PER_SECOND: '0',
      STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
      STREAM_LEASE_SECONDS: '2',
      // Instances sharing a database share the key of its stored credentials.
      SECRETS_KEY: randomBytes(32).toString('base64'),
      LOG_LEVEL: 'warn',
    };
    // The first migrates; the second starts beside it (migrations take an advisory lock).
    metricsPorts = [await freePort(), await freePort()];
    instances = await Promise.all(
      metricsPorts.map((port) => startChildInstance({ ...env, METRICS_PORT: String(port) }, { logs: true })),
    );
    say(`service instances ready: ${instances.map((i) => i.url).join(', ')}`);
    const me = (await (
      await fetch(`${instances[0]!.url}/v1/me`, { headers: { Authorization: `Bearer ${KEYS.acme}` } })
    ).json()) as { data: { accountId: string } };
    const made = await fetch(`${instances[0]!.url}/v1/accounts/${me.data.accountId}/destinations`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${ADMIN_KEYS.acmeAdmin}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'ha-drill', kind: 'webhook', url: receiver.url, batchSize: 100, q: 'actor:drill' }),
    });
    expect(made.status).toBe(201);
    receiver.secrets = [((await made.json()) as { data: { secret: string } }).data.secret];
    tail = new TailReader(instances[1]!.url, KEYS.acme, new URLSearchParams({ q: 'actor:drill' }).toString());
    await tail.start();
    load = new IngestLoad(
      instances.map((i) => i.url),
      KEYS.acme,
      WORKERS,
    );
  }, 180_000);

  afterAll(async () => {
    // The instances' last 30 error lines and anything not a log line (a crash): a 500 names its cause there.
    instances.forEach((instance, i) =>
      instance
        .stderr()
        .split('\n')
        .filter((line) => line.trim() !== '' && (!line.startsWith('{') || /"level":"(error|fatal)"/.test(line)))
        .slice(-30)
        .forEach((line) => say(`instance ${i}: ${line.slice(0, 2000)}`)),
    );
    await load?.stop();
    await tail?.stop();
    await Promise.all(instances.map((i) => i.stop()));
    await receiver.stop();
    await cluster?.stop();
    say(`drill done in ${((Date.now() - drillStarted) / 1000).toFixed(1)} s wall`);
  }, 120_000);

  /** Load, then `failover` (returns when the leader was lost), load until ingest is back and a while after. */
  async function underLoad(name: string, failover: () => Promise<number>): Promise<FailoverImpact> {
    await sleep(STEADY_MS);
    const from = await failover();
    const newLeader = await cluster.waitHealthy(60_000).catch(() => null);
    const promotedMs = Date.now() - from;
    // Ingest must be back on both instances by itself.
    await eventually(() => {
      const impact = failoverImpact(load.requests, instances.length, from, Date.now());
      expect(impact.resumedAt.every((t) => t !== null)).toBe(true);
    }, 60_000);
    await sleep(STEADY_MS);
    const impact = failoverImpact(load.requests, instances.length, from, Date.now());
    impacts.push({ name, impact, promotedMs });
    const outages = impact.firstFailure.map((failed, i) =>
      failed === null ? 'none' : `${impact.resumedAt[i]! - failed} ms`,
    );
    say(
      `${name}: new leader ${newLeader?.name ?? '?'}; first 2xx ${impact.firstSuccessMs} ms after; ` +
        `outage per instance (first failure to first 2xx) ${outages.join(', ')}; ` +
        `${impact.cut.length} requests cut, ${impact.retries} retries; statuses ${JSON.stringify(impact.statuses)}`,
    );
    return impact;
  }

  /** What every failover must show: only 2xx and 503 + Retry-After, and each cut request served at its first retry after recovery. */
  function expectHonest(impact: FailoverImpact): void {
    const odd = impact.cut.flatMap((r) =>
      r.attempts.filter((a) => a.status !== 503 && (a.status < 200 || a.status >= 300)),
    );
    if (odd.length > 0) say(`answers neither 2xx nor 503: ${JSON.stringify(odd)}`);
    expect(Object.keys(impact.statuses).filter((s) => !/^2\d\d$/.test(s) && s !== '503')).toEqual([]);
    expect(impact.withoutRetryAfter).toBe(0);
    expect(impact.notServedOnFirstRetry.map((r) => r.attempts.map((a) => `${a.status} ${a.code ?? ''}`))).toEqual([]);
  }

  it('SIGKILL of the leader’s PostgreSQL under load: ingest resumes by itself, nothing acknowledged is lost', async () => {
    load.start();
    const impact = await underLoad('SIGKILL of the leader', async () => {
      const { node, at } = await cluster.killLeaderPostgres();
      say(`killed the PostgreSQL of ${node.name}`);
      return at;
    });
    expectHonest(impact);
  }, 150_000);

  it('a planned switchover with patronictl under load: the same', async () => {
    const impact = await underLoad('switchover', async () => {
      const at = Date.now();
      const { from, to } = await cluster.switchover();
      say(`switchover ${from.name} -> ${to.name}`);
      return at;
    });
    expectHonest(impact);
  }, 150_000);

  it('afterwards: every acknowledged event stored once, every chain intact; the tail and the webhook got every event in order', async () => {
    await load.stop();
    const unfinished = load.requests.filter((r) => r.events === null);
    expect(unfinished.map((r) => r.attempts.map((a) => a.status))).toEqual([]);
    const acknowledged = load.acknowledged();
    const ids = new Set(acknowledged.map((e) => e.id));
    expect(ids.size).toBe(acknowledged.length);
    const db = new Client({ connectionString: cluster.url('rw', 'audit') });
    await db.connect();
    try {
      const stored = (
        await db.query<{ id: string }>(`SELECT audit_uuid_ulid('evt', id) AS id FROM events WHERE actor = 'drill'`)
      ).rows.map((r) => r.id);
      expect(stored.length).toBe(ids.size);
      expect(stored.filter((id) => !ids.has(id))).toEqual([]);
      // Contiguous positions 1..n in every chain, then the service's own whole-chain verification.
      const chains = (
        await db.query<{ id: string; n: number; top: number; distinct: number }>(
          `SELECT audit_uuid_ulid('chn', chain_id) AS id, count(*)::int AS n, max(position)::int AS top,
                  count(DISTINCT position)::int AS distinct
             FROM events WHERE actor = 'drill' GROUP BY chain_id`,
        )
      ).rows;
      expect(chains.length).toBe(65);
      expect(chains.filter((c) => c.n !== c.top || c.n !== c.distinct)).toEqual([]);
      for (const chain of chains) {
        const res = await fetch(`${instances[0]!.url}/v1/chain/${chain.id}/verify`, {
          headers: { Authorization: `Bearer ${KEYS.acme}` },
        });
        expect(res.status).toBe(200);
        expect(((await res.json()) as { data: { valid: boolean } }).data.valid).toBe(true);
      }
    } finally {
      await db.end();
    }
    await eventually(() => expect(checkDelivery(tail.events, ids).missing).toEqual([]), 60_000);
    await eventually(
      () =>
        expect(
          checkDelivery(
            receiver.batches.filter((b) => b.status === 200).flatMap((b) => b.events),
            ids,
          ).missing,
        ).toEqual([]),
      60_000,
    );
    const tailed = checkDelivery(tail.events, ids);
    const hooked = checkDelivery(
      receiver.batches.filter((b) => b.status === 200).flatMap((b) => b.events),
      ids,
    );
    say(
      `${ids.size} events acknowledged and stored in ${load.requests.length} requests; ` +
        `tail: ${tailed.duplicates} repeated, ${tail.reconnections} reconnections ${JSON.stringify(tail.refusals)}; ` +
        `webhook: ${hooked.duplicates} delivered twice`,
    );
    // The tail sends each event exactly once, each chain in position order; the webhook at least once, in order.
    expect(tailed).toEqual({ missing: [], duplicates: 0, notNext: 0 });
    expect(hooked.notNext).toBe(0);
    for (const { name, impact, promotedMs } of impacts)
      say(
        `${name}: cluster healthy again after ${promotedMs} ms; first 2xx after ${impact.firstSuccessMs} ms; ` +
          `${impact.cut.length} requests cut; ${impact.retries} retries`,
      );
  }, 150_000);

  it('an append read back at once by id, through the instances reading DATABASE_READ_URL: never a 404, 1,000 times', async () => {
    const statuses: Record<string, number> = {};
    const started = Date.now();
    await Promise.all(
      Array.from({ length: 4 }, async (_, loop) => {
        const url = instances[loop % instances.length]!.url;
        for (let i = 0; i < 250; i++) {
          const created = await fetch(`${url}/v1/events`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${KEYS.acme}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ actor: 'read-back', action: 'drill.read', chain: `read-${loop}` }),
          });
          expect(created.status).toBe(201);
          const { data } = (await created.json()) as { data: { id: string } };
          const read = await fetch(`${url}/v1/events/${data.id}`, {
            headers: { Authorization: `Bearer ${KEYS.acme}` },
          });
          statuses[read.status] = (statuses[read.status] ?? 0) + 1;
          await read.body?.cancel();
        }
      }),
    );
    say(`read back 1,000 appends at once by id in ${Date.now() - started} ms: ${JSON.stringify(statuses)}`);
    expect(statuses).toEqual({ 200: 1000 });
    // The read-only port is in use: lists go to a replica through HAProxy, whose lag is reported.
    const metric = async (port: number, series: string) => {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      const line = text.split('\n').find((l) => l.startsWith(`${series} `));
      return line === undefined ? null : Number(line.split(' ')[1]);
    };
    for (const [i, instance] of instances.entries())
      await eventually(async () => {
        const res = await fetch(`${instance.url}/v1/events?limit=10`, {
          headers: { Authorization: `Bearer ${KEYS.acme}` },
        });
        expect(res.status).toBe(200);
        expect(await metric(metricsPorts[i]!, 'audit_db_reads_total{side="replica"}')).toBeGreaterThan(0);
      }, 20_000);
    say(`replica lag: ${await metric(metricsPorts[0]!, 'audit_db_replica_lag_seconds')} s`);
  }, 120_000);
});
