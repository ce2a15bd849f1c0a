'use strict';

const { appendContender, compareRuns } = require('./common');

/** Events seeded into each of the two databases, so both append to tables of the same size. */
const SEED = Number(process.env.BENCH_INDEXES_SEED || 200_000);

/**
 * Issue 20: what search, the live tail and statistics cost the append path (target: ingest within
 * 10 % of before). Two services of the same build, each on a fresh database seeded alike: one as
 * migrated, one as before issue 20, without `ix_events_context` (GIN, q's context terms),
 * `ix_events_account_txid` and the `txid` column's default (the live tail's), and without the
 * rollup's insert trigger `trg_events_rollup_insert` (statistics' `event_counts`). Single appends
 * over 64 chains (BENCH_CONNECTIONS) and batches of BENCH_BATCH_SIZE over 64 chains
 * (BENCH_BATCH_CONNECTIONS), interleaved in one run.
 */
async function indexesScenario(ctx) {
  const { cfg } = ctx;
  const withIndexes = await ctx.startVariantService('with_indexes', { prepare: async () => undefined, seed: SEED });
  const without = await ctx.startVariantService('without_indexes', {
    prepare: (client) =>
      client.query(`DROP INDEX ix_events_context;
                    DROP INDEX ix_events_account_txid;
                    ALTER TABLE events ALTER COLUMN txid DROP DEFAULT;
                    DROP TRIGGER trg_events_rollup_insert ON events`),
    seed: SEED,
  });
  ctx.cpu.track('serviceWithIndexes', withIndexes.pid, 'service');
  ctx.cpu.track('serviceWithoutIndexes', without.pid, 'service');
  try {
    const singles = await compareRuns({
      ctx,
      label: 'ingest, with and without issue 20 (indexes, txid, rollup)',
      contenders: [
        appendContender(ctx, 'service', withIndexes.serviceUrl, 'single'),
        appendContender(ctx, 'withoutIndexes', without.serviceUrl, 'single'),
      ],
    });
    const batches = await compareRuns({
      ctx,
      label: 'batch, with and without issue 20 (indexes, txid, rollup)',
      contenders: [
        appendContender(ctx, 'service', withIndexes.serviceUrl, 'batch'),
        appendContender(ctx, 'withoutIndexes', without.serviceUrl, 'batch'),
      ],
    });
    const row = (id, title, result, unit, scale) => ({
      id,
      title,
      unit,
      service: scale(result.service),
      baselines: [
        {
          key: 'withoutIndexes',
          title: `same build, ${SEED.toLocaleString('en-US')} seeded events, without ix_events_context, ix_events_account_txid, txid default, rollup trigger`,
          summary: scale(result.withoutIndexes),
          target: { minRatio: 0.9 },
        },
      ],
    });
    const perEvent = (summary) => summary;
    const perBatch = (summary) => ({
      ...summary,
      throughput: summary.throughput * cfg.batchSize,
      spread: summary.spread && {
        ...summary.spread,
        min: summary.spread.min * cfg.batchSize,
        max: summary.spread.max * cfg.batchSize,
      },
      runs: summary.runs.map((r) => ({ ...r, throughput: r.throughput * cfg.batchSize })),
    });
    return [
      row(
        'indexes-ingest',
        `ingest over 64 chains, ${cfg.ingestConnections} conns, with issue 20's indexes and rollup`,
        singles,
        'events/s',
        perEvent,
      ),
      row(
        'indexes-batch',
        `batch of ${cfg.batchSize} over 64 chains, ${cfg.batchConnections} conns, with issue 20's indexes and rollup`,
        batches,
        'events/s',
        perBatch,
      ),
    ];
  } finally {
    ctx.cpu.untrack('serviceWithIndexes');
    ctx.cpu.untrack('serviceWithoutIndexes');
    await withIndexes.stop();
    await without.stop();
  }
}

module.exports = { indexesScenario };
