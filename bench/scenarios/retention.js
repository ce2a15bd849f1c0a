'use strict';

const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const { withClient } = require('../lib/database');
const { percentileOfSorted, sorted } = require('../lib/stats');
const { eventBody, fmt, ms } = require('./common');

const MB = 1024 * 1024;

/**
 * Issue 21's targets: a retention sweep of one chain of BENCH_RETENTION_EVENTS (1,000,000) events
 * takes ≤ 60 s; appends to that same chain meanwhile keep p99 ≤ 2× their p99 without the sweep;
 * events and merkle_nodes (tables and indexes) after the sweep and its vacuum are ≤ 20 % of before.
 *
 * A service of its own on a fresh database (the sweep changes the data, and the storage figure is of
 * whole tables), with an operator key and RETENTION_SWEEP_SECONDS=0 (only the sweep asked for runs),
 * seeded with one chain (`seed-big` of `bench-ingest`: real hashes and Merkle nodes, so the prune's
 * checks and the verification after it are genuine). The seed's timestamps end a day ago; with a
 * retention of 1 day and RETENTION_CLOCK_OFFSET_SECONDS of an hour, every seeded event is older than
 * the retention and every appended one is not. Then: appends to `seed-big` on
 * BENCH_RETENTION_CONNECTIONS connections for BENCH_SECONDS × BENCH_RUNS (at least 10 s) without a
 * sweep, then the same appends during `POST /v1/retention/sweep` (from its request to its answer,
 * vacuum included, with the service's RETENTION_VACUUM). The chain must then start right after the
 * seed and verify (`GET /v1/chain/:id/verify`), or the scenario fails.
 */
async function retentionScenario(ctx) {
  const { cfg, log } = ctx;
  const keys = { ingest: secret(), operator: secret() };
  const variant = await ctx.startVariantService('retention', {
    prepare: async () => undefined,
    seed: cfg.retentionEvents,
    chainCount: 1,
    env: {
      API_KEYS: `bench-ingest:${keys.ingest}:ingest+read+admin,system:${keys.operator}:operator`,
      RETENTION_SWEEP_SECONDS: '0',
      RETENTION_CLOCK_OFFSET_SECONDS: '3600',
    },
  });
  ctx.cpu.track('serviceRetention', variant.pid, 'service');
  const service = { url: variant.serviceUrl, headers: { authorization: `Bearer ${keys.ingest}` } };
  const chain = variant.seeded.chains[0];
  const storage = () => withClient(variant.databaseUrl, storageBytes);
  try {
    await request(service, 'PUT', `/v1/accounts/${variant.seeded.accountId}/retention`, { days: 1 }, 200);
    if (cfg.warmupSeconds > 0)
      await appendLoad(service, cfg.retentionConnections, chain.name, delay(cfg.warmupSeconds));
    const quietSeconds = Math.max(10, cfg.seconds * cfg.runs);
    const quiet = await appendLoad(service, cfg.retentionConnections, chain.name, delay(quietSeconds));
    log(`  retention · appends without a sweep: ${describe(quiet)}`);

    const before = await storage();
    const cpuBefore = ctx.cpu.snapshot();
    const started = performance.now();
    const sweep = request(
      { ...service, headers: { authorization: `Bearer ${keys.operator}` } },
      'POST',
      '/v1/retention/sweep',
      undefined,
      200,
    );
    const during = await appendLoad(service, cfg.retentionConnections, chain.name, sweep);
    const sweepSeconds = (performance.now() - started) / 1000;
    const cpu = ctx.cpu.between(cpuBefore, ctx.cpu.snapshot());
    const pruned = (await sweep).data;
    const after = await storage();
    log(
      `  retention · sweep: ${fmt(pruned.events)} events in ${sweepSeconds.toFixed(1)} s; appends meanwhile: ${describe(during)}; storage ${(before.total / MB).toFixed(1)} MB → ${(after.total / MB).toFixed(1)} MB`,
    );

    const status = (await request(service, 'GET', `/v1/chain/${chain.id}/status`, undefined, 200)).data;
    if (pruned.events !== cfg.retentionEvents || status.firstPosition !== cfg.retentionEvents + 1)
      throw new Error(
        `the sweep pruned ${pruned.events} events and the chain starts at ${status.firstPosition}; expected the ${cfg.retentionEvents} seeded ones`,
      );
    const verified = (await request(service, 'GET', `/v1/chain/${chain.id}/verify`, undefined, 200)).data;
    const retained = status.lastPosition - status.firstPosition + 1;
    if (verified.valid !== true || verified.checkedEvents !== retained)
      throw new Error(`after the prune the chain does not verify: ${JSON.stringify(verified).slice(0, 300)}`);

    const p99Ratio = quiet.p99 > 0 ? during.p99 / quiet.p99 : null;
    const sweptLine = prunedLogLine(variant.logFile);
    return [
      {
        id: 'retention',
        title: `retention sweep of one chain of ${fmt(cfg.retentionEvents)} events, appends to it on ${cfg.retentionConnections} conns meanwhile`,
        unit: 'events/s',
        service: { ...during, spread: null, failed: during.failed, cpu, runs: [{ ...during, cpu }] },
        baselines: [
          {
            key: 'noSweep',
            title: `the same appends without a sweep (${quietSeconds} s)`,
            summary: { ...quiet, spread: null, runs: [quiet] },
            target: null,
          },
        ],
        checks: [
          { label: 'sweep duration', value: sweepSeconds, unit: 's', max: 60 },
          { label: 'append p99 during / without the sweep', value: p99Ratio, unit: '×', max: 2 },
          {
            label: 'events + merkle_nodes after / before',
            value: (100 * after.total) / before.total,
            unit: '%',
            max: 20,
          },
        ],
        notes: [
          `pruned ${fmt(pruned.events)} events in ${sweepSeconds.toFixed(1)} s (${fmt(pruned.events / sweepSeconds)} events/s, vacuum included); the chain then verified: ${fmt(verified.checkedEvents)} retained events from position ${fmt(status.firstPosition)}`,
          `appends to the chain without the sweep: ${describe(quiet)}; during it: ${describe(during)}`,
          `events + merkle_nodes with their indexes: ${(before.total / MB).toFixed(1)} MB before (events ${(before.events / MB).toFixed(1)}, merkle_nodes ${(before.nodes / MB).toFixed(1)}), ${(after.total / MB).toFixed(1)} MB after (events ${(after.events / MB).toFixed(1)}, merkle_nodes ${(after.nodes / MB).toFixed(1)})`,
          ...(sweptLine ? [`the service's log of the sweep: ${sweptLine}`] : []),
        ],
      },
    ];
  } finally {
    ctx.cpu.untrack('serviceRetention');
    await variant.stop();
  }
}

/** pg_total_relation_size (heap, indexes, TOAST) of events and merkle_nodes, in bytes. */
async function storageBytes(client) {
  const { rows } = await client.query(
    `SELECT pg_total_relation_size('events')::float8 AS events, pg_total_relation_size('merkle_nodes')::float8 AS nodes`,
  );
  return { events: rows[0].events, nodes: rows[0].nodes, total: rows[0].events + rows[0].nodes };
}

/**
 * Single appends to one chain on `connections` keep-alive connections, each sending its next as
 * soon as the last answered, until `until` settles. Latency per request, nearest-rank percentiles
 * (as autocannon's and loopLoad's).
 */
async function appendLoad(service, connections, chain, until) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
  const latencies = [];
  const statusCodes = {};
  let failed = 0;
  let done = false;
  const finished = Promise.resolve(until).finally(() => (done = true));
  const started = performance.now();
  let k = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (!done) {
        const t0 = performance.now();
        const status = await post(agent, service, '/v1/events', eventBody(k++, chain)).catch(() => 0);
        statusCodes[status] = (statusCodes[status] || 0) + 1;
        if (status === 201) latencies.push(performance.now() - t0);
        else failed++;
      }
    }),
  );
  await finished;
  agent.destroy();
  const seconds = (performance.now() - started) / 1000;
  const s = sorted(latencies);
  return {
    throughput: latencies.length / seconds,
    p50: percentileOfSorted(s, 50),
    p99: percentileOfSorted(s, 99),
    max: s.at(-1) ?? null,
    ok: latencies.length,
    failed,
    statusCodes,
    seconds,
  };
}

function post(agent, service, path, body) {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${service.url}${path}`,
      {
        method: 'POST',
        agent,
        headers: {
          ...service.headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(payload),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** One request; its parsed body when it answered `expected`, else an error naming what it answered. */
async function request(service, method, path, body, expected) {
  const response = await fetch(`${service.url}${path}`, {
    method,
    headers: { ...service.headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== expected) throw new Error(`${method} ${path}: HTTP ${response.status} ${text.slice(0, 300)}`);
  return JSON.parse(text);
}

/** The sweeper's log line of the prune (its sizes and timings), as the service wrote it. */
function prunedLogLine(file) {
  const line = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .find((l) => l.includes('"msg":"Pruned '));
  if (!line) return null;
  const { level: _level, time: _time, pid: _pid, hostname: _hostname, ...rest } = JSON.parse(line);
  return JSON.stringify(rest);
}

function describe(load) {
  return `${fmt(load.throughput)}/s, p50 ${ms(load.p50)}, p99 ${ms(load.p99)}, max ${ms(load.max)}${load.failed ? `, ${load.failed} failed ${JSON.stringify(load.statusCodes)}` : ''}`;
}

const delay = (seconds) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));
const secret = () => crypto.randomBytes(16).toString('hex');

module.exports = { retentionScenario };
