'use strict';

const { monotonicFactory } = require('ulid');
const { ulidToUuid } = require('../lib/ids');
const { seedEvents } = require('../lib/seed');
const { compareRuns, eventBody, probe, serviceLoad } = require('./common');

/** Events seeded into each of the two chains the reads compare (the `builds` scenario's big chain holds 20,000). */
const READ_EVENTS = Number(process.env.BENCH_HASH_VERSIONS_EVENTS || 20_000);
/** BENCH_HASH_VERSIONS_PARTS=reads: the reads only (default ingest,reads). */
const PARTS = (process.env.BENCH_HASH_VERSIONS_PARTS || 'ingest,reads').split(',').filter(Boolean);

/**
 * Issue 29's ingest target: appends to version-2 chains (salted commitments, contract §17) against
 * appends to version-1 chains (§3) of the same service in the same run, single events over 64 chains
 * and batches of BENCH_BATCH_SIZE over 64 chains. The version-1 chains are made in the database with
 * hash_version 1, as migration 1765400000000 leaves the chains that existed before it; the service
 * creates the version-2 ones (its default) on their first append. Target: ≥ 0.9× both.
 */
async function hashVersionsScenario(ctx) {
  return [
    ...(PARTS.includes('ingest') ? await ingestRows(ctx) : []),
    ...(PARTS.includes('reads') ? await readRows(ctx) : []),
  ];
}

async function ingestRows(ctx) {
  const { cfg } = ctx;
  const nextId = monotonicFactory();
  const names = Array.from({ length: 64 }, (_, i) => [`hv1-c${i}`, `hv1-b${i}`]).flat();
  await ctx.db.query(
    `INSERT INTO chains (id, account_id, name, hash_version)
     SELECT id, $2::uuid, name, 1 FROM unnest($1::uuid[], $3::varchar[]) AS c(id, name)`,
    [names.map(() => ulidToUuid(`chn_${nextId()}`)), ulidToUuid(ctx.accounts.ingest), names],
  );
  const contender = (key, prefix, kind) => {
    let k = 0;
    const next =
      kind === 'single'
        ? () => {
            const n = k++;
            return { method: 'POST', path: '/v1/events', body: JSON.stringify(eventBody(n, `${prefix}-c${n % 64}`)) };
          }
        : () => {
            const events = Array.from({ length: cfg.batchSize }, () => {
              const n = k++;
              return eventBody(n, `${prefix}-b${n % 64}`);
            });
            return { method: 'POST', path: '/v1/events/batch', body: JSON.stringify({ events }) };
          };
    const connections = kind === 'single' ? cfg.ingestConnections : cfg.batchConnections;
    return { key, run: (seconds) => serviceLoad(ctx, connections, seconds, next) };
  };
  const rows = [];
  for (const kind of ['single', 'batch']) {
    const result = await compareRuns({
      ctx,
      label: `hash versions, ${kind}`,
      contenders: [contender('v2', 'hv2', kind), contender('v1', 'hv1', kind)],
    });
    const { rows: versions } = await ctx.db.query(
      `SELECT c.hash_version AS v, count(*)::int AS events, count(e.salt_seed)::int AS seeded
         FROM events e JOIN chains c ON c.id = e.chain_id
        WHERE e.account_id = $1 AND c.name LIKE 'hv_-%' GROUP BY 1 ORDER BY 1`,
      [ulidToUuid(ctx.accounts.ingest)],
    );
    const [v1, v2] = [1, 2].map((v) => versions.find((r) => r.v === v) ?? { events: 0, seeded: 0 });
    if (v1.seeded !== 0 || v2.seeded !== v2.events || v2.events === 0 || v1.events === 0)
      throw new Error(`the chains were not of the versions compared: ${JSON.stringify(versions)}`);
    rows.push({
      id: `hash-versions-${kind}`,
      title:
        kind === 'single'
          ? `ingest into version-2 chains, ${cfg.ingestConnections} connections over 64 chains`
          : `batches of ${cfg.batchSize} into version-2 chains, ${cfg.batchConnections} connections over 64 chains`,
      unit: kind === 'single' ? 'events/s' : 'requests/s',
      service: result.v2,
      baselines: [
        {
          key: 'v1',
          title: 'the same into version-1 chains (hash_version 1)',
          summary: result.v1,
          target: { minRatio: 0.9 },
        },
      ],
      notes: [
        `after the run: ${v2.events.toLocaleString('en-US')} version-2 events (each with its salt seed), ${v1.events.toLocaleString('en-US')} version-1 events (none)`,
      ],
    });
  }
  return rows;
}

/**
 * Issue 41's read targets: two chains of READ_EVENTS seeded events each in the ingest account, one of
 * version 1 (hash_version 1, no salt seeds) and one of version 2, the same generator's events
 * otherwise; list pages of 50 of each chain (`chain_id=`: a version-2 page carries each event's
 * `hashing`, its salts derived from the seed on every read) at the read concurrency, and whole-chain
 * verifications of each (one at a time: an account runs one at once), interleaved. Targets: list ≥ 0.95×,
 * whole-chain verification ≥ 0.9× of version 1.
 */
async function readRows(ctx) {
  const { cfg } = ctx;
  const seeded = {};
  const client = await ctx.db.connect();
  try {
    for (const version of [1, 2]) {
      const seed = await seedEvents(client, {
        accountId: ctx.accounts.ingest,
        total: READ_EVENTS,
        chainCount: 1,
        hashing: ctx.hashing,
        hashVersion: version,
        names: [`hv-read-v${version}`],
        prngSeed: 0x41 + version,
      });
      seeded[version] = seed.chains[0];
    }
    for (const table of ['events', 'chains', 'merkle_nodes']) await client.query(`VACUUM ANALYZE ${table}`);
  } finally {
    client.release();
  }
  const listPath = (version) => `/v1/events?chain_id=${seeded[version].id}&limit=50`;
  const verifyPath = (version) => `/v1/chain/${seeded[version].id}/verify`;
  for (const version of [1, 2]) {
    const page = await probe(ctx, listPath(version));
    const events = page.body && page.body.data;
    if (page.status !== 200 || !Array.isArray(events) || events.length !== 50)
      throw new Error(`the list of the version-${version} chain answered ${page.status}: ${page.text.slice(0, 200)}`);
    if (events.some((e) => (e.hashing === undefined) !== (version === 1)))
      throw new Error(`the version-${version} chain's page is not of version-${version} events`);
    const verified = await probe(ctx, verifyPath(version));
    const data = verified.body && verified.body.data;
    if (verified.status !== 200 || !data || data.valid !== true || data.checkedEvents !== READ_EVENTS)
      throw new Error(
        `the version-${version} chain does not verify: ${verified.status} ${verified.text.slice(0, 200)}`,
      );
  }
  const gets = (key, connections, path) => ({
    key,
    run: (seconds) => serviceLoad(ctx, connections, seconds, () => ({ method: 'GET', path })),
  });
  // The service answers 429 beyond READS_PER_ACCOUNT reads of one account at once (default 4).
  const listConnections = Math.min(cfg.readConnections, Number(process.env.READS_PER_ACCOUNT || 4));
  const rows = [];
  for (const [id, title, connections, make, minRatio] of [
    ['hash-versions-list', `list, pages of 50 of one chain, ${listConnections} conns`, listConnections, listPath, 0.95],
    [
      'hash-versions-chain-verify',
      `whole-chain verification, ${READ_EVENTS.toLocaleString('en-US')} events, 1 conn`,
      1,
      verifyPath,
      0.9,
    ],
  ]) {
    const result = await compareRuns({
      ctx,
      label: id,
      contenders: [gets('v2', connections, make(2)), gets('v1', connections, make(1))],
    });
    rows.push({
      id,
      title: `${title}: a version-2 chain`,
      unit: 'req/s',
      service: result.v2,
      baselines: [
        {
          key: 'v1',
          title: `the same of a version-1 chain (hash_version 1), ${READ_EVENTS.toLocaleString('en-US')} events each`,
          summary: result.v1,
          target: { minRatio },
        },
      ],
    });
  }
  return rows;
}

module.exports = { hashVersionsScenario };
