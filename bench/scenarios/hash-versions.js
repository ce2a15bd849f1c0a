'use strict';

const { monotonicFactory } = require('ulid');
const { ulidToUuid } = require('../lib/ids');
const { compareRuns, eventBody, serviceLoad } = require('./common');

/**
 * Issue 29's ingest target: appends to version-2 chains (salted commitments, contract §17) against
 * appends to version-1 chains (§3) of the same service in the same run, single events over 64 chains
 * and batches of BENCH_BATCH_SIZE over 64 chains. The version-1 chains are made in the database with
 * hash_version 1, as migration 1765400000000 leaves the chains that existed before it; the service
 * creates the version-2 ones (its default) on their first append. Target: ≥ 0.9× both.
 */
async function hashVersionsScenario(ctx) {
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

module.exports = { hashVersionsScenario };
