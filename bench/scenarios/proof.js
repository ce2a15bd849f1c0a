'use strict';

const path = require('node:path');
const { ulidToUuid } = require('../lib/ids');
const { loopLoad } = require('../lib/load');
const { prng } = require('../lib/stats');
const { compareRuns, probe, serviceGets, unavailable } = require('./common');

/**
 * The service's own statement (MerkleNodesRepository.inclusion, from the build), issued directly
 * with pg as the same named prepared statement, the proof and root assembled with the same
 * hashing lib: what the endpoint does, minus HTTP and the framework. The event's and the account's
 * ids (`evt_…`, `acc_…`) are bound as the columns store them, ulidToUuid of each per request, as the
 * repository binds them.
 */
async function proofDirect(ctx, sql, id) {
  const { hashing } = ctx;
  const { rows } = await ctx.readPool.query({
    name: 'inclusion',
    text: sql,
    values: [ulidToUuid(id), ulidToUuid(ctx.accounts.proofs), null],
  });
  const row = rows[0];
  const stored = (n) =>
    row.hashes
      .subarray(32 * row.levels.findIndex((level, i) => level === n.level && row.indexes[i] === n.index))
      .subarray(0, 32);
  const proof = hashing.inclusionPlan(row.position - 1, row.size);
  const root = hashing.rootPlan(row.size);
  return {
    path: hashing.assemble(proof, proof.nodes.map(stored)),
    root: hashing.assemble(root, root.nodes.map(stored))[0],
  };
}

/** GET /v1/events/:id/proof over random events of a chain of BENCH_PROOF_EVENTS events. */
async function proofScenario(ctx) {
  const { cfg, proofSeed, hashing } = ctx;
  const sql = require(
    path.join(cfg.root, 'dist/apps/api/libs/database/src/repositories/merkle-nodes.repository.js'),
  ).INCLUSION_SQL;
  const ids = proofSeed.sampleIds;
  const size = proofSeed.chains[0].position;
  const title = `inclusion proof, random event of a ${size.toLocaleString('en-US')}-event chain, ${cfg.readConnections} conns`;
  const sample = prng(11);
  let verified = 0;
  const probes = 20;
  for (let i = 0; i < probes; i++) {
    const res = await probe(ctx, `/v1/events/${ids[Math.floor(sample() * ids.length)]}/proof`);
    if (res.status !== 200) return [{ id: 'proof', title, unit: 'req/s', available: unavailable(res) }];
    const p = res.body.data;
    const ok = hashing.verifyInclusion(
      p.leafIndex,
      p.size,
      hashing.eventLeafHash(p.eventHash),
      p.proof.map((h) => Buffer.from(h, 'hex')),
      Buffer.from(p.rootHash, 'hex'),
    );
    if (ok && p.size === size) verified++;
  }
  const direct = await proofDirect(ctx, sql, ids[0]);
  const serviceRandom = prng(13);
  const singleRandom = prng(13);
  const sqlRandom = prng(13);
  const window = ctx.sampler.open();
  const result = await compareRuns({
    ctx,
    label: 'proof',
    contenders: [
      serviceGets(
        ctx,
        'service',
        cfg.readConnections,
        () => `/v1/events/${ids[Math.floor(serviceRandom() * ids.length)]}/proof`,
      ),
      serviceGets(ctx, 'single', 1, () => `/v1/events/${ids[Math.floor(singleRandom() * ids.length)]}/proof`),
      {
        key: 'sql',
        run: (seconds) =>
          loopLoad({
            loops: cfg.readConnections,
            seconds,
            op: () => proofDirect(ctx, sql, ids[Math.floor(sqlRandom() * ids.length)]),
          }),
      },
    ],
  });
  return [
    {
      id: 'proof',
      title,
      unit: 'req/s',
      service: result.service,
      serverPeakRss: window.close().peak,
      baselines: [
        {
          key: 'sql',
          title: `same statement (named) via pg + proof assembled in process, pool ${cfg.readPoolSize}, ${cfg.readConnections} loops`,
          summary: result.sql,
          target: { minRatio: 0.5 },
        },
      ],
      checks: [{ label: `p99 at ${cfg.readConnections} connections`, value: result.service.p99, unit: 'ms', max: 10 }],
      single: result.single,
      notes: [
        `${verified}/${probes} sampled proofs verified (libs/hashing verifyInclusion) at size ${size}; a proof has ${direct.path.length} hashes`,
        `at 1 connection: ${Math.round(result.single.throughput)} req/s, p50 ${result.single.p50} ms, p99 ${result.single.p99} ms`,
        // What the p99 target asks of the machine: the same reads without HTTP, at the same concurrency.
        `the SQL baseline at ${cfg.readConnections} loops: p50 ${result.sql.p50.toFixed(1)} ms, p99 ${result.sql.p99.toFixed(1)} ms`,
      ],
    },
  ];
}

module.exports = { proofScenario };
