'use strict';

const { ulidToUuid } = require('../lib/ids');
const { loopLoad } = require('../lib/load');
const { median, prng, spread } = require('../lib/stats');
const { compareRuns, probe, rowHash, serviceGets, unavailable } = require('./common');

const MB = 1024 * 1024;

/**
 * What a verification has to read: the event with its chain, and its predecessor's hash. `id` is
 * the event's (`evt_…`); the ids are bound as the columns store them (ulidToUuid, per request as the
 * service binds them), and the row's uuids are read back as the API's ids for the hash (rowHash);
 * the predecessor is looked up by the row's chain_id as stored.
 */
async function verifyDirect(ctx, id) {
  const { rows } = await ctx.readPool.query(
    `SELECT e.id, e.chain_id, e.position, e.actor, e.action, e.resource, e.context, e."timestamp", encode(e.previous_hash, 'hex') AS previous_hash, encode(e.hash, 'hex') AS hash, encode(e.salt_seed, 'hex') AS salt_seed, e.erasure, c.name
       FROM events e INNER JOIN chains c ON c.id = e.chain_id WHERE e.id = $1 AND e.account_id = $2`,
    [ulidToUuid(id), ulidToUuid(ctx.accounts.bench)],
  );
  const row = rows[0];
  const computed = rowHash(ctx.hashing, row);
  const position = Number(row.position);
  const predecessor =
    position === 1
      ? null
      : (
          await ctx.readPool.query(
            `SELECT encode(hash, 'hex') AS hash FROM events WHERE chain_id = $1 AND position = $2`,
            [row.chain_id, position - 1],
          )
        ).rows[0];
  const linked = row.previous_hash === (position === 1 ? ctx.hashing.GENESIS_HASH : predecessor && predecessor.hash);
  if (computed !== row.hash || !linked) throw new Error(`seeded event ${id} does not verify`);
}

/** Scenario 5: GET /v1/events/:id/verify over random seeded events. */
async function verifyScenario(ctx) {
  const { cfg, seed } = ctx;
  const ids = seed.sampleIds;
  const title = `verify one event (random of ${ids.length.toLocaleString('en-US')} seeded), ${cfg.readConnections} conns`;
  const sample = prng(3);
  const probes = [];
  for (let i = 0; i < 20; i++)
    probes.push(await probe(ctx, `/v1/events/${ids[Math.floor(sample() * ids.length)]}/verify`));
  if (probes[0].status !== 200) return [{ id: 'verify', title, unit: 'req/s', available: unavailable(probes[0]) }];
  const valid = probes.filter((p) => p.status === 200 && p.body && p.body.data && p.body.data.valid === true).length;
  const serviceRandom = prng(5);
  const sqlRandom = prng(5);
  const window = ctx.sampler.open();
  const result = await compareRuns({
    ctx,
    label: 'verify',
    contenders: [
      serviceGets(
        ctx,
        'service',
        cfg.readConnections,
        () => `/v1/events/${ids[Math.floor(serviceRandom() * ids.length)]}/verify`,
      ),
      {
        key: 'sql',
        run: (seconds) =>
          loopLoad({
            loops: cfg.readConnections,
            seconds,
            op: () => verifyDirect(ctx, ids[Math.floor(sqlRandom() * ids.length)]),
          }),
      },
    ],
  });
  return [
    {
      id: 'verify',
      title,
      unit: 'req/s',
      service: result.service,
      serverPeakRss: window.close().peak,
      baselines: [{ key: 'sql', title: 'same reads via pg + hash in process', summary: result.sql, target: null }],
      notes: [`${valid}/${probes.length} sampled seeded events answered valid: true`],
    },
  ];
}

/**
 * Reads the chain (`chn_…`) in position order, page by page, re-hashing every event (its id read back
 * as `evt_…` per row, rowHash, as the service's verification worker does) and checking every link.
 */
async function walkChain(ctx, chainId) {
  const storedChainId = ulidToUuid(chainId);
  let position = 0;
  let previous = ctx.hashing.GENESIS_HASH;
  let checked = 0;
  let invalid = 0;
  for (;;) {
    const { rows } = await ctx.readPool.query(
      `SELECT id, position, actor, action, resource, context, "timestamp", encode(previous_hash, 'hex') AS previous_hash, encode(hash, 'hex') AS hash,
              encode(salt_seed, 'hex') AS salt_seed, erasure
         FROM events WHERE chain_id = $1 AND position > $2 ORDER BY position LIMIT 5000`,
      [storedChainId, position],
    );
    if (rows.length === 0) break;
    for (const row of rows) {
      const p = Number(row.position);
      const hash = rowHash(ctx.hashing, row, chainId);
      if (p !== position + 1 || row.previous_hash !== previous || hash !== row.hash) invalid++;
      previous = row.hash;
      position = p;
      checked++;
    }
  }
  return { checked, invalid };
}

/** Scenario 6: GET /v1/chain/:chainId/verify on the big seeded chain. */
async function chainVerifyScenario(ctx) {
  const { cfg, log, seed } = ctx;
  const big = seed.chains[0];
  const title = `whole-chain verification, ${big.position.toLocaleString('en-US')} events`;
  const path = `/v1/chain/${big.id}/verify`;
  const first = await probe(ctx, path); // also the warm-up
  if (first.status !== 200) return [{ id: 'chain-verify', title, unit: 'events/s', available: unavailable(first) }];
  const runs = [];
  const baseRuns = [];
  for (let r = 0; r < cfg.chainVerifyRuns; r++) {
    const rss = ctx.sampler.open();
    const cpuBefore = ctx.cpu.snapshot();
    const started = performance.now();
    const res = await probe(ctx, path);
    const seconds = (performance.now() - started) / 1000;
    const cpu = ctx.cpu.between(cpuBefore, ctx.cpu.snapshot());
    const memory = rss.close();
    const data = (res.body && res.body.data) || {};
    runs.push({
      status: res.status,
      seconds,
      checked: data.checkedEvents,
      valid: data.valid,
      throughput: (data.checkedEvents || 0) / seconds,
      rssGrowth: memory.growth,
      rssPeak: memory.peak,
      cpu,
    });
    const walkBefore = ctx.cpu.snapshot();
    const t0 = performance.now();
    const walk = await walkChain(ctx, big.id);
    const walkSeconds = (performance.now() - t0) / 1000;
    baseRuns.push({
      seconds: walkSeconds,
      checked: walk.checked,
      invalid: walk.invalid,
      throughput: walk.checked / walkSeconds,
      cpu: ctx.cpu.between(walkBefore, ctx.cpu.snapshot()),
    });
    log(
      `  chain verify run ${r + 1}/${cfg.chainVerifyRuns}: HTTP ${res.status}, valid ${data.valid}, ${data.checkedEvents} events in ${seconds.toFixed(2)} s (${Math.round(runs[r].throughput)}/s), RSS +${(memory.growth / MB).toFixed(1)} MB; direct walk ${Math.round(baseRuns[r].throughput)}/s`,
    );
  }
  const rate = median(runs.map((r) => r.throughput));
  const bad = runs.filter((r) => r.status !== 200 || r.valid !== true || r.checked !== big.position).length;
  return [
    {
      id: 'chain-verify',
      title,
      unit: 'events/s',
      service: {
        throughput: rate,
        p50: null,
        p99: null,
        spread: spread(runs.map((r) => r.throughput)),
        failed: bad,
        runs,
      },
      serverPeakRss: Math.max(...runs.map((r) => r.rssPeak)),
      rssGrowth: Math.max(...runs.map((r) => r.rssGrowth)),
      baselines: [
        {
          key: 'walk',
          title: 'same walk via pg (pages of 5,000) + hashing in process',
          summary: {
            throughput: median(baseRuns.map((r) => r.throughput)),
            p50: null,
            p99: null,
            spread: spread(baseRuns.map((r) => r.throughput)),
            runs: baseRuns,
          },
          target: null,
        },
      ],
      checks: [{ label: 'events verified per second', value: rate, unit: 'events/s', min: 100_000 }],
      notes: [
        `${runs.length - bad}/${runs.length} runs answered valid: true with checkedEvents = ${big.position}; the direct walk found ${baseRuns[0].invalid} invalid events`,
        `server RSS growth during a verification (max of runs): ${(Math.max(...runs.map((r) => r.rssGrowth)) / MB).toFixed(1)} MB`,
      ],
    },
  ];
}

module.exports = { verifyScenario, chainVerifyScenario };
