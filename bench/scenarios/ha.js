'use strict';

const { Client } = require('pg');
const { median, percentileOfSorted, sorted } = require('../lib/stats');
const { appendContender, compareRuns, fmt, serviceGets, summarize } = require('./common');

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** test/ha/'s cluster and load (TypeScript, as `npm run test:ha` runs them), loaded through ts-node. */
function haModules() {
  require('ts-node').register({ transpileOnly: true });
  return { ...require('../../test/ha/cluster'), ...require('../../test/ha/ingest-load') };
}

/** BENCH_HA_FAILOVERS (default 20): SIGKILLs of the leader in a row. */
function failoverCount() {
  const raw = process.env.BENCH_HA_FAILOVERS;
  const value = raw === undefined || raw === '' ? 20 : Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 200)
    throw new Error(`BENCH_HA_FAILOVERS must be an integer from 1 to 200 (got "${raw}")`);
  return value;
}

/**
 * Issue 39's targets on the HA deployment built on this machine (test/ha/cluster.ts: etcd, three
 * PostgreSQL 15 under Patroni with synchronous_mode, HAProxy), with the built service on HAProxy's
 * read-write port and, for the second instance, DATABASE_READ_URL on its read-only port:
 * 1. BENCH_HA_FAILOVERS (20) SIGKILLs of the leader's PostgreSQL in a row under ingest (8 clients,
 *    single events and batches of 10, 64 chains and a hot chain, Idempotency-Key and Retry-After
 *    honoured; each kill once the old leader is back as a replica): acknowledged events lost
 *    (target 0) and the median time from the leader's death to ingest's first 2xx (target ≤ 5 s);
 * 2. GET /v1/stats/events grouped by resource over the events of (1), a `q` so that the rollup
 *    cannot answer it: the instance reading the two replicas against the one reading the leader
 *    alone (target ≥ 1.8×; on one machine the replicas share its cores);
 * 3. appends' p99 with that statistics load on the replicas at the same time against without
 *    (target ≤ 1.2×).
 */
async function haScenario(ctx) {
  const { cfg, log } = ctx;
  const { HaCluster, IngestLoad, failoverImpact, haMissing } = haModules();
  const missing = haMissing();
  if (missing)
    return [{ id: 'ha-failover', title: 'failovers under ingest (Patroni)', unit: 'req/s', available: missing }];
  const failovers = failoverCount();
  const cluster = await HaCluster.start({ log: (line) => log(`  ha: ${line}`) });
  const stops = [];
  try {
    const admin = new Client({ connectionString: cluster.url('rw') });
    await admin.connect();
    await admin.query('CREATE DATABASE audit');
    await admin.end();
    const shared = { databaseUrl: cluster.url('rw', 'audit'), seeded: null };
    const leaderOnly = await ctx.startVariantService('ha-leader', { shareDatabaseOf: shared });
    stops.push(leaderOnly.stop);
    const withReplicas = await ctx.startVariantService('ha-replicas', {
      shareDatabaseOf: shared,
      env: { DATABASE_READ_URL: cluster.url('ro', 'audit') },
    });
    stops.push(withReplicas.stop);

    // 1. Failovers under ingest.
    const load = new IngestLoad([leaderOnly.serviceUrl, withReplicas.serviceUrl], ctx.keys.ingest, 8, 'ha-bench');
    const deaths = [];
    load.start();
    try {
      for (let i = 0; i < failovers; i++) {
        await cluster.waitHealthy(120_000);
        await sleep(2000);
        const { node, at } = await cluster.killLeaderPostgres();
        let impact = failoverImpact(load.requests, 2, at, Date.now());
        while (impact.resumedAt.some((t) => t === null)) {
          if (Date.now() - at > 60_000) throw new Error(`ingest did not resume within 60 s of failover ${i + 1}`);
          await sleep(100);
          impact = failoverImpact(load.requests, 2, at, Date.now());
        }
        deaths.push(impact);
        log(
          `  ha: failover ${i + 1}/${failovers} (${node.name} killed): first 2xx after ${impact.firstSuccessMs} ms, ${impact.cut.length} requests cut, ${JSON.stringify(impact.statuses)}`,
        );
      }
    } finally {
      await load.stop();
    }
    const acknowledged = new Set(load.acknowledged().map((e) => e.id));
    const db = new Client({ connectionString: cluster.url('rw', 'audit') });
    await db.connect();
    const stored = new Set(
      (await db.query(`SELECT audit_uuid_ulid('evt', id) AS id FROM events WHERE actor = 'ha-bench'`)).rows.map(
        (r) => r.id,
      ),
    );
    await db.end();
    const lost = [...acknowledged].filter((id) => !stored.has(id)).length;
    const toFirst2xx = deaths.map((d) => d.firstSuccessMs);
    const odd = deaths.flatMap((d) => Object.keys(d.statuses).filter((s) => !/^2\d\d$/.test(s) && s !== '503'));
    const firstRetryRefused = deaths.reduce((n, d) => n + d.notServedOnFirstRetry.length, 0);
    const okLatencies = sorted(
      load.requests.flatMap((r) => r.attempts.filter((a) => a.status < 300).map((a) => a.answeredAt - a.sentAt)),
    );
    const ingest = summarize([
      {
        throughput:
          load.requests.length /
          ((Math.max(...load.requests.flatMap((r) => r.attempts.map((a) => a.answeredAt))) -
            Math.min(...load.requests.flatMap((r) => r.attempts.map((a) => a.sentAt)))) /
            1000),
        p50: percentileOfSorted(okLatencies, 50),
        p99: percentileOfSorted(okLatencies, 99),
        non2xx: 0,
        errors: 0,
        statusCodes: {},
      },
    ]);

    // 2. Statistics on the replicas against the leader alone.
    const now = Date.now();
    const statsPath = `/v1/stats/events?${new URLSearchParams({
      after: new Date(now - 3_600_000).toISOString(),
      before: new Date(now + 3_600_000).toISOString(),
      group_by: 'resource',
      q: 'actor:ha-bench action:drill.*',
      limit: '100',
    })}`;
    const stats = await compareRuns({
      ctx,
      label: 'ha statistics',
      contenders: [
        serviceGets({ ...ctx, serviceUrl: withReplicas.serviceUrl }, 'replicas', cfg.readConnections, () => statsPath),
        serviceGets({ ...ctx, serviceUrl: leaderOnly.serviceUrl }, 'leader', cfg.readConnections, () => statsPath),
      ],
    });

    // 3. Appends with that load on the replicas at the same time, against without.
    const appends = appendContender(ctx, 'alone', leaderOnly.serviceUrl, 'single');
    const reads = serviceGets(
      { ...ctx, serviceUrl: withReplicas.serviceUrl },
      'reads',
      cfg.readConnections,
      () => statsPath,
    );
    const p99 = await compareRuns({
      ctx,
      label: 'ha appends',
      contenders: [
        appends,
        {
          key: 'withReads',
          run: async (seconds) => (await Promise.all([appends.run(seconds), reads.run(seconds)]))[0],
        },
      ],
    });
    const p99Ratio = p99.alone.p99 > 0 ? p99.withReads.p99 / p99.alone.p99 : null;

    return [
      {
        id: 'ha-failover',
        title: `${failovers} SIGKILLs of the leader (Patroni, synchronous_mode) under ingest, 8 clients over 2 instances`,
        unit: 'req/s',
        service: ingest,
        checks: [
          { label: 'acknowledged events lost', value: lost, unit: 'events', max: 0 },
          {
            label: 'median time from the leader’s death to the first 2xx',
            value: median(toFirst2xx),
            unit: 'ms',
            max: 5000,
          },
          { label: 'answers other than 2xx and 503', value: odd.length, unit: 'answers', max: 0 },
          {
            label: 'cut requests refused at their first retry after recovery',
            value: firstRetryRefused,
            unit: 'requests',
            max: 0,
          },
        ],
        notes: [
          `time to the first 2xx (ms), by failover: ${toFirst2xx.join(', ')}`,
          `${fmt(acknowledged.size)} events acknowledged, ${fmt(stored.size)} stored; requests cut: ${deaths.map((d) => d.cut.length).join(', ')}; retries: ${deaths.reduce((n, d) => n + d.retries, 0)}`,
        ],
      },
      {
        id: 'ha-stats',
        title: `GET /v1/stats/events by resource over ${fmt(stored.size)} events, ${cfg.readConnections} connections, on DATABASE_READ_URL (2 replicas)`,
        unit: 'req/s',
        service: stats.replicas,
        baselines: [
          { key: 'leader', title: 'the same on the leader alone', summary: stats.leader, target: { minRatio: 1.8 } },
        ],
      },
      {
        id: 'ha-append-p99',
        title: `appends (${cfg.ingestConnections} connections) with that statistics load on the replicas`,
        unit: 'events/s',
        service: p99.withReads,
        baselines: [{ key: 'alone', title: 'appends alone', summary: p99.alone }],
        checks: [{ label: 'append p99 with the reads ÷ without', value: p99Ratio, unit: '×', max: 1.2 }],
      },
    ];
  } finally {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await cluster.stop();
  }
}

module.exports = { haScenario };
