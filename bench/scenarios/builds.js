'use strict';

const fs = require('node:fs');
const { appendContender, compareRuns, serviceLoad } = require('./common');

/** Events seeded into each of the two databases (the list reads them). */
const SEED = Number(process.env.BENCH_BUILDS_SEED || 200_000);

/**
 * Two builds of the service A/B in one run (issue 19: single and batch ingest and list within 3 %
 * of their rates before the issue): BENCH_BUILDS=<main.js of the build measured>,<main.js of the
 * build before>, e.g. the `dist/apps/api/apps/api/src/main.js` of two checkouts. Each runs on a
 * fresh database of its own (its own migrations), seeded alike; single appends over 64 chains,
 * batches over 64 chains and list pages of 50, interleaved. Without BENCH_BUILDS it is skipped.
 */
async function buildsScenario(ctx) {
  const { cfg } = ctx;
  const builds = (process.env.BENCH_BUILDS || '').split(',').filter(Boolean);
  if (builds.length !== 2 || !builds.every((file) => fs.existsSync(file))) {
    return [
      {
        id: 'builds',
        title: 'two builds A/B',
        unit: 'events/s',
        available: 'not run (set BENCH_BUILDS=<after>,<before>)',
      },
    ];
  }
  const after = await ctx.startVariantService('build_after', {
    prepare: async () => undefined,
    seed: SEED,
    serviceMain: builds[0],
  });
  const before = await ctx.startVariantService('build_before', {
    prepare: async () => undefined,
    seed: SEED,
    serviceMain: builds[1],
  });
  ctx.cpu.track('serviceAfter', after.pid, 'service');
  ctx.cpu.track('serviceBefore', before.pid, 'service');
  const at = (target) => ({ ...ctx, serviceUrl: target.serviceUrl });
  try {
    const contenders = (make) => [make('service', after), make('before', before)];
    const single = (key, target) => appendContender(ctx, key, target.serviceUrl, 'single');
    const batch = (key, target) => appendContender(ctx, key, target.serviceUrl, 'batch');
    const list = (key, target) => ({
      key,
      run: (seconds) =>
        serviceLoad(at(target), cfg.readConnections, seconds, () => ({ method: 'GET', path: '/v1/events?limit=50' })),
    });
    const rows = [];
    for (const [id, title, make] of [
      ['builds-ingest', `ingest over 64 chains, ${cfg.ingestConnections} conns`, single],
      ['builds-batch', `batch of ${cfg.batchSize} over 64 chains, ${cfg.batchConnections} conns (requests/s)`, batch],
      ['builds-list', `list, page of 50, ${cfg.readConnections} conns`, list],
    ]) {
      const result = await compareRuns({ ctx, label: id, contenders: contenders(make) });
      rows.push({
        id,
        title: `${title}: this build against the one before`,
        unit: id === 'builds-list' ? 'req/s' : id === 'builds-batch' ? 'req/s' : 'events/s',
        service: result.service,
        baselines: [
          {
            key: 'before',
            title: `the build before (${builds[1]}), ${SEED.toLocaleString('en-US')} seeded events`,
            summary: result.before,
            target: { minRatio: 0.97 },
          },
        ],
      });
    }
    return rows;
  } finally {
    ctx.cpu.untrack('serviceAfter');
    ctx.cpu.untrack('serviceBefore');
    await after.stop();
    await before.stop();
  }
}

module.exports = { buildsScenario };
