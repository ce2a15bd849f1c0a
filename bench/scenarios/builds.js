'use strict';

const fs = require('node:fs');
const { prng } = require('../lib/stats');
const { appendContender, compareRuns, serviceLoad } = require('./common');
const { searchDraw, searchPath, statsVariants } = require('./search');

/** Events seeded into each of the two databases (the list reads them). */
const SEED = Number(process.env.BENCH_BUILDS_SEED || 200_000);
/** BENCH_BUILDS_ONLY=builds-list,builds-search: some of the figures only. */
const ONLY = (process.env.BENCH_BUILDS_ONLY || '').split(',').filter(Boolean);

/**
 * Two builds of the service A/B in one run (issue 19: single and batch ingest and list within 3 %
 * of their rates before the issue): BENCH_BUILDS=<main.js of the build measured>,<main.js of the
 * build before>, e.g. the `dist/apps/api/apps/api/src/main.js` of two checkouts. Each runs on a
 * fresh database of its own (its own migrations), seeded alike; single appends over 64 chains,
 * batches over 64 chains, list pages of 50, `q` searches, statistics, event verifications,
 * inclusion proofs and whole-chain verifications, interleaved (issue 28's targets: ingest ≥ 1.0×,
 * reads ≥ 0.9×). Without BENCH_BUILDS it is skipped.
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
    /** GETs of `pathOf(seeded, random)` (at the read concurrency), each build drawing from its own seed. */
    const gets =
      (pathOf, connections = cfg.readConnections) =>
      (key, target) => {
        const random = prng(7);
        return {
          key,
          run: (seconds) =>
            serviceLoad(at(target), connections, seconds, () => ({
              method: 'GET',
              path: pathOf(target.seeded, random),
            })),
        };
      };
    const pick = (ids, random) => ids[Math.floor(random() * ids.length)];
    const list = gets(() => '/v1/events?limit=50');
    const search = gets((_, random) => searchPath(searchDraw(random)));
    const stats = gets((seeded) => statsVariants(seeded)[0].path);
    const verify = gets((seeded, random) => `/v1/events/${pick(seeded.sampleIds, random)}/verify`);
    const proof = gets((seeded, random) => `/v1/events/${pick(seeded.sampleIds, random)}/proof`);
    // One at a time: an account runs one whole-chain verification at once (429 beside it).
    const chainVerify = gets((seeded) => `/v1/chain/${seeded.chains[0].id}/verify`, 1);
    const rows = [];
    for (const [id, title, make] of [
      ['builds-ingest', `ingest over 64 chains, ${cfg.ingestConnections} conns`, single],
      ['builds-batch', `batch of ${cfg.batchSize} over 64 chains, ${cfg.batchConnections} conns (requests/s)`, batch],
      ['builds-list', `list, page of 50, ${cfg.readConnections} conns`, list],
      ['builds-search', `q search (action prefix and a context term), ${cfg.readConnections} conns`, search],
      ['builds-stats', `statistics by day over the seed, ${cfg.readConnections} conns`, stats],
      ['builds-verify', `event verification, ${cfg.readConnections} conns`, verify],
      ['builds-proof', `inclusion proofs, ${cfg.readConnections} conns`, proof],
      ['builds-chain-verify', 'whole-chain verification of the big chain, 1 conn', chainVerify],
    ]) {
      if (ONLY.length > 0 && !ONLY.includes(id)) continue;
      const result = await compareRuns({ ctx, label: id, contenders: contenders(make) });
      rows.push({
        id,
        title: `${title}: this build against the one before`,
        unit: id === 'builds-ingest' ? 'events/s' : 'req/s',
        service: result.service,
        baselines: [
          {
            key: 'before',
            title: `the build before (${builds[1]}), ${SEED.toLocaleString('en-US')} seeded events`,
            summary: result.before,
            // Issue 28: ingest at least as fast, reads at least 0.9x.
            target: { minRatio: id === 'builds-ingest' || id === 'builds-batch' ? 1.0 : 0.9 },
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
