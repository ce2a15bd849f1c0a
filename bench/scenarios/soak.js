'use strict';

const crypto = require('node:crypto');
const { httpLoad } = require('../lib/load');
const { eventBody, fmt, summarize } = require('./common');

/**
 * Issue 26, item 12: two instances of the service on one database append alternately to one chain
 * while both serve lists, for BENCH_SOAK_SECONDS (600) in slices of BENCH_SOAK_SLICE_SECONDS (60).
 * Once (2026-11), after ~50,000 lists one of two such instances fell from ~1,300 to ~170 appends/s
 * within a minute while the other kept ~1,600/s. Targets: in every slice, the slower instance's
 * append rate is at least 0.8 of the faster one's, and each instance's last slice is at least 0.8
 * of its first. Each instance gets BENCH_SOAK_APPEND_CONNECTIONS (8) connections appending to the
 * chain `soak` and BENCH_SOAK_LIST_CONNECTIONS (4) listing pages of 50 (no filter, by actor, by the
 * chain, and with a q), on a database of its own seeded with BENCH_SOAK_SEED (50,000) events.
 */
async function soakScenario(ctx) {
  const { log } = ctx;
  const cfg = soakConfig();
  const key = crypto.randomBytes(16).toString('hex');
  const env = { API_KEYS: `bench-ingest:${key}:ingest+read` };
  const first = await ctx.startVariantService('soak', { prepare: async () => undefined, seed: cfg.seed, env });
  const second = await ctx.startVariantService('soak_b', { shareDatabaseOf: first, env });
  ctx.cpu.track('serviceSoakA', first.pid, 'service');
  ctx.cpu.track('serviceSoakB', second.pid, 'service');
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  const instances = [
    { name: 'A', url: first.serviceUrl, slices: [] },
    { name: 'B', url: second.serviceUrl, slices: [] },
  ];
  const chainId = first.seeded.chains[0].id;
  try {
    let k = 0;
    const appendNext = () => ({ method: 'POST', path: '/v1/events', body: JSON.stringify(eventBody(k++, 'soak')) });
    let l = 0;
    const listPaths = [
      () => '/v1/events?limit=50',
      () => `/v1/events?limit=50&actor=user_${l % 1000}`,
      () => `/v1/events?limit=50&chain_id=${chainId}`,
      () => `/v1/events?limit=50&q=${encodeURIComponent(`action:document.* -actor:user_${l % 1000}`)}`,
    ];
    const listNext = () => ({ method: 'GET', path: listPaths[l++ % listPaths.length]() });
    const sliceCount = Math.max(2, Math.round(cfg.seconds / cfg.sliceSeconds));
    for (let slice = 0; slice < sliceCount; slice++) {
      const loads = instances.map(async (instance) => {
        const [appends, lists] = await Promise.all([
          httpLoad({
            url: instance.url,
            connections: cfg.appendConnections,
            seconds: cfg.sliceSeconds,
            headers,
            next: appendNext,
          }),
          httpLoad({
            url: instance.url,
            connections: cfg.listConnections,
            seconds: cfg.sliceSeconds,
            headers,
            next: listNext,
          }),
        ]);
        instance.slices.push({ appends, lists });
      });
      await Promise.all(loads);
      log(
        `  soak · slice ${slice + 1}/${sliceCount}: ` +
          instances
            .map((i) => {
              const s = i.slices[slice];
              return `${i.name} ${fmt(s.appends.throughput)} appends/s (p99 ${s.appends.p99} ms), ${fmt(s.lists.throughput)} lists/s`;
            })
            .join('; '),
      );
    }
  } finally {
    ctx.cpu.untrack('serviceSoakA');
    ctx.cpu.untrack('serviceSoakB');
    await second.stop();
    await first.stop();
  }
  return [soakRow(cfg, instances)];
}

function soakRow(cfg, instances) {
  const rate = (instance, i) => instance.slices[i].appends.throughput;
  const n = instances[0].slices.length;
  const between = Array.from({ length: n }, (_, i) => {
    const rates = instances.map((instance) => rate(instance, i));
    return Math.min(...rates) / Math.max(...rates);
  });
  const overTime = instances.map((instance) => rate(instance, n - 1) / rate(instance, 0));
  const lists = instances.reduce((sum, i) => sum + i.slices.reduce((s, x) => s + x.lists.ok, 0), 0);
  const failures = instances.flatMap((i) =>
    i.slices.flatMap((s) => [s.appends, s.lists]).filter((r) => r.non2xx > 0 || r.errors > 0),
  );
  const [a, b] = instances.map((instance) => summarize(instance.slices.map((s) => s.appends)));
  return {
    id: 'soak',
    title: `two instances, one chain, ${cfg.appendConnections} append + ${cfg.listConnections} list conns each, ${n} × ${cfg.sliceSeconds} s`,
    unit: 'appends/s',
    // Instance A's appends against instance B's, slice by slice (each pair ran at the same time).
    service: a,
    baselines: [{ key: 'B', title: 'instance B (same database, same chain, same load)', summary: b }],
    checks: [
      { label: 'slowest slice: slower / faster instance', value: Math.min(...between), unit: '×', min: 0.8 },
      ...instances.map((instance, i) => ({
        label: `instance ${instance.name}: last / first slice`,
        value: overTime[i],
        unit: '×',
        min: 0.8,
      })),
      {
        label: 'failed requests',
        value: failures.reduce((s, r) => s + r.non2xx + r.errors, 0),
        unit: 'requests',
        max: 0,
      },
    ],
    notes: [
      ...instances.map(
        (instance) =>
          `instance ${instance.name}, appends/s by slice: ${instance.slices.map((s) => fmt(s.appends.throughput)).join(', ')}; lists/s: ${instance.slices.map((s) => fmt(s.lists.throughput)).join(', ')}`,
      ),
      `${fmt(lists)} lists served in all`,
    ],
  };
}

function soakConfig() {
  const int = (name, fallback) => {
    const raw = process.env[name];
    if (raw === undefined || raw === '') return fallback;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer (got "${raw}")`);
    return value;
  };
  return {
    seconds: int('BENCH_SOAK_SECONDS', 600),
    sliceSeconds: int('BENCH_SOAK_SLICE_SECONDS', 60),
    appendConnections: int('BENCH_SOAK_APPEND_CONNECTIONS', 8),
    listConnections: int('BENCH_SOAK_LIST_CONNECTIONS', 4),
    seed: int('BENCH_SOAK_SEED', 50_000),
  };
}

module.exports = { soakScenario };
