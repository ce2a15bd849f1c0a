'use strict';

const { serviceLoad } = require('./common');

const ACTOR = 'erase-me@example.com';
const CHAINS = 16;

/**
 * Issue 29's erasure target: on the seeded database (BENCH_EVENTS, 1M by default), 10,000 version-2
 * events of one actor (appended through the batch API over 16 chains) erased by one POST /v1/erasures
 * (actor and context.ip) in ≤ 5 s, while appends to the same chains go on: their p99 during the
 * erasure ≤ 2× their p99 without one, measured just before in the same run.
 */
async function erasureScenario(ctx) {
  const { cfg, log } = ctx;
  const admin = { authorization: `Bearer ${ctx.keys.benchAdmin}`, 'content-type': 'application/json' };
  const writer = { ...ctx.headers, 'content-type': 'application/json' };
  const post = async (path, body, headers) => {
    const res = await fetch(`${ctx.serviceUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${text.slice(0, 300)}`);
    return JSON.parse(text);
  };
  const target = 10_000;
  for (let i = 0; i < target / 100; i++) {
    const events = Array.from({ length: 100 }, (_, j) => ({
      actor: ACTOR,
      action: 'profile.read',
      resource: `doc:${i * 100 + j}`,
      context: { ip: '203.0.113.9', n: i * 100 + j },
      chain: `era-${(i * 100 + j) % CHAINS}`,
    }));
    await post('/v1/events/batch', { events }, writer);
  }
  let k = 0;
  const next = () => {
    const n = k++;
    return {
      method: 'POST',
      path: '/v1/events',
      body: JSON.stringify({
        actor: `other_${n % 100}`,
        action: 'doc.update',
        context: { n },
        chain: `era-${n % CHAINS}`,
      }),
    };
  };
  const seconds = Math.max(cfg.seconds, 8);
  const load = (s) => serviceLoad({ ...ctx, headers: writer }, cfg.ingestConnections, s, next);
  const without = await load(seconds);
  log(`  erasure · appends without: ${without.throughput.toFixed(0)}/s, p99 ${without.p99.toFixed(1)} ms`);
  const during = load(seconds);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const started = performance.now();
  const erased = await post(
    '/v1/erasures',
    { q: `actor:"${ACTOR}"`, fields: ['actor', 'context.ip'], reason: 'bench' },
    admin,
  );
  const erasureSeconds = (performance.now() - started) / 1000;
  const withErasure = await during;
  log(
    `  erasure · ${erased.data.events} events erased in ${erasureSeconds.toFixed(2)} s; appends during: ${withErasure.throughput.toFixed(0)}/s, p99 ${withErasure.p99.toFixed(1)} ms`,
  );
  const { rows } = await ctx.db.query(`SELECT count(*)::int AS n FROM events WHERE actor = $1`, [ACTOR]);
  const { rows: total } = await ctx.db.query(`SELECT count(*)::int AS n FROM events`);
  return [
    {
      id: 'erasure',
      title: `erase ${target.toLocaleString('en-US')} events of one actor among ${total[0].n.toLocaleString('en-US')}, appends to their chains going on`,
      unit: 'events/s',
      service: withErasure,
      baselines: [{ key: 'without', title: 'the same appends without an erasure', summary: without, target: null }],
      checks: [
        { label: 'events erased', value: erased.data.events, unit: 'events', min: target },
        { label: 'erasure time', value: erasureSeconds, unit: 's', max: 5 },
        { label: 'append p99 during the erasure ÷ without', value: withErasure.p99 / without.p99, unit: '×', max: 2 },
        { label: 'events still holding the actor', value: rows[0].n, unit: 'events', max: 0 },
      ],
      notes: [`POST /v1/erasures answered ${JSON.stringify(erased.data)}`],
    },
  ];
}

module.exports = { erasureScenario };
