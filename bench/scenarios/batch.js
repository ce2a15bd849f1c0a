'use strict';

const { compareRuns, eventBody, quietBaseline, quietContender, serviceLoad, unavailable } = require('./common');
const { createChains, integrity, noTreeBaseline, noTreeContender, rawPgContender, withClients } = require('./ingest');

const BATCH_PATH = '/v1/events/batch';

/** POST /v1/events/batch of one event: 201 when the endpoint is there (the event counts in the integrity check). */
async function probeBatch(ctx, chain) {
  const response = await fetch(`${ctx.serviceUrl}${BATCH_PATH}`, {
    method: 'POST',
    headers: ctx.headers,
    body: JSON.stringify({ events: [eventBody(0, chain)] }),
  });
  const text = await response.text();
  let body = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON
  }
  return { status: response.status, body };
}

/**
 * `connections` connections each sending batches of `batchSize` events, every body new (autocannon's
 * setupRequest builds each request); event k of the run goes on chain `chainOf(k)`. Throughput is
 * counted in events (2xx requests × batchSize); p50/p99 stay per request.
 */
function batchContender(ctx, connections, chainOf) {
  const size = ctx.cfg.batchSize;
  let k = 0;
  return {
    key: 'service',
    run: async (seconds) => {
      const result = await serviceLoad(ctx, connections, seconds, () => {
        const events = Array.from({ length: size }, () => {
          const n = k++;
          return eventBody(n, chainOf(n));
        });
        return { method: 'POST', path: BATCH_PATH, body: JSON.stringify({ events }) };
      });
      return { ...result, requests: result.ok, ok: result.ok * size, throughput: result.throughput * size };
    },
  };
}

/**
 * One batch scenario: the service's batches against the same batches to the service without the
 * Merkle tree and against raw pg one-transaction-per-event, in one run.
 */
async function batchScenario(ctx, { id, title, label, chainOf, probeChain, pgChains, rawTitle, minRatio }) {
  const { cfg } = ctx;
  const check = await probeBatch(ctx, probeChain);
  if (check.status !== 201) return [{ id, title, unit: 'events/s', available: unavailable(check) }];
  const window = ctx.sampler.open();
  const result = await withClients(ctx, cfg.ingestConnections, (clients) =>
    compareRuns({
      ctx,
      label,
      contenders: [
        batchContender(ctx, cfg.batchConnections, chainOf),
        noTreeContender(ctx, (c) => batchContender(c, cfg.batchConnections, chainOf)),
        quietContender(ctx, (c) => batchContender(c, cfg.batchConnections, chainOf)),
        rawPgContender(ctx, clients, pgChains),
      ],
    }),
  );
  const { notes, integrity: checked } = await integrity(ctx);
  return [
    {
      id,
      title,
      unit: 'events/s',
      service: result.service,
      serverPeakRss: window.close().peak,
      baselines: [
        { key: 'rawPg', title: rawTitle, summary: result.rawPg, target: { minRatio } },
        noTreeBaseline(result),
        quietBaseline(result),
      ],
      notes: [`p50/p99 are per request of ${cfg.batchSize} events`, ...notes],
      integrity: checked,
    },
  ];
}

/** Batches over 64 chains: event k on chain b<k % 64>, so every batch of 100 names all 64 chains. */
async function batchSpread(ctx) {
  const { cfg } = ctx;
  const chains = 64;
  return batchScenario(ctx, {
    id: 'batch-spread',
    title: `batch of ${cfg.batchSize}, ${cfg.batchConnections} connections over ${chains} chains`,
    label: 'batch 64 chains',
    chainOf: (k) => `b${k % chains}`,
    probeChain: 'b0',
    pgChains: await createChains(
      ctx,
      Array.from({ length: chains }, (_, i) => `pg-b${i}`),
    ),
    rawTitle: `raw pg, 1 tx/event, ${cfg.ingestConnections} clients, ${chains} chains`,
    minRatio: 6.0,
  });
}

/** Batches all on one chain. */
async function batchHot(ctx) {
  const { cfg } = ctx;
  return batchScenario(ctx, {
    id: 'batch-hot',
    title: `batch of ${cfg.batchSize}, ${cfg.batchConnections} connections on ONE chain`,
    label: 'batch 1 chain',
    chainOf: () => 'batch-hot',
    probeChain: 'batch-hot',
    pgChains: await createChains(ctx, ['pg-batch-hot']),
    rawTitle: `raw pg, 1 tx/event, ${cfg.ingestConnections} clients, 1 chain`,
    minRatio: 15.0,
  });
}

module.exports = { batchSpread, batchHot, batchContender };
