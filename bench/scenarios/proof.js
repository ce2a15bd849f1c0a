'use strict';

const { loopLoad } = require('../lib/load');
const { prng } = require('../lib/stats');
const { compareRuns, probe, serviceGets, unavailable } = require('./common');

/** The one statement an inclusion proof reads (MerkleNodesRepository.inclusion), at the chain's size. */
const INCLUSION_SQL = `WITH f AS (
   SELECT e.chain_id, e.position, e.hash, c.last_position AS chain_size, COALESCE($3::bigint, c.last_position) AS size
     FROM events e JOIN chains c ON c.id = e.chain_id WHERE e.id = $1 AND e.account_id = $2)
 SELECT f.chain_id, f.position::float8 AS position, f.hash, f.chain_size::float8 AS chain_size,
        f.size::float8 AS size, n.level, n."index"::float8 AS index, n.hash AS node
   FROM f LEFT JOIN LATERAL (
     SELECT n.level, n."index", n.hash
       FROM generate_series(0, 62) AS l(level)
       CROSS JOIN LATERAL (VALUES (((f.position - 1) >> l.level) # 1),
                                  (CASE WHEN (f.size >> l.level) & 1 = 1 THEN (f.size >> l.level) - 1 END)) AS w(idx)
       JOIN merkle_nodes n ON n.chain_id = f.chain_id AND n.level = l.level AND n."index" = w.idx
      WHERE f.size BETWEEN f.position AND f.chain_size AND (f.size >> l.level) > 0) n ON true`;

/** The same read issued directly with pg, the proof and root assembled with the same hashing lib. */
async function proofDirect(ctx, id) {
  const { hashing } = ctx;
  const { rows } = await ctx.readPool.query(INCLUSION_SQL, [id, ctx.accounts.proofs, null]);
  const event = rows[0];
  const stored = new Map(rows.map((r) => [`${r.level}/${r.index}`, r.node]));
  const pick = (plan) => plan.nodes.map((n) => stored.get(`${n.level}/${n.index}`));
  const proof = hashing.inclusionPlan(event.position - 1, event.size);
  const root = hashing.rootPlan(event.size);
  return { path: hashing.assemble(proof, pick(proof)), root: hashing.assemble(root, pick(root))[0] };
}

/** GET /v1/events/:id/proof over random events of a chain of BENCH_PROOF_EVENTS events. */
async function proofScenario(ctx) {
  const { cfg, proofSeed, hashing } = ctx;
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
  const direct = await proofDirect(ctx, ids[0]);
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
            op: () => proofDirect(ctx, ids[Math.floor(sqlRandom() * ids.length)]),
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
          title: `same read (1 statement) via pg + proof assembled in process, pool ${cfg.readPoolSize}, ${cfg.readConnections} loops`,
          summary: result.sql,
          target: { minRatio: 0.5 },
        },
      ],
      checks: [{ label: `p99 at ${cfg.readConnections} connections`, value: result.service.p99, unit: 'ms', max: 10 }],
      single: result.single,
      notes: [
        `${verified}/${probes} sampled proofs verified (libs/hashing verifyInclusion) at size ${size}; a proof has ${direct.path.length} hashes`,
        `at 1 connection: ${Math.round(result.single.throughput)} req/s, p50 ${result.single.p50} ms, p99 ${result.single.p99} ms`,
      ],
    },
  ];
}

module.exports = { proofScenario };
