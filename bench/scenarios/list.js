'use strict';

const { ulidToUuid } = require('../lib/ids');
const { loopLoad } = require('../lib/load');
const { prng } = require('../lib/stats');
const { compareRuns, probe, quietBaseline, quietContender, serviceGets, unavailable } = require('./common');

/** What EventsService.list asks TypeORM for: the account's page, chain joined, newest first, limit + 1. */
const SELECT = `SELECT e.id, e.account_id, e.chain_id, e.position, e.actor, e.action, e.resource, e.context, e."timestamp",
       e.previous_hash, e.hash, c.id AS c_id, c.account_id AS c_account_id, c.name AS c_name,
       c.last_position AS c_last_position, c.last_hash AS c_last_hash, c.last_timestamp AS c_last_timestamp, c.created_at AS c_created_at
  FROM events e INNER JOIN chains c ON c.id = e.chain_id`;

/**
 * The filter variants. Each request draws its own value (an actor, a chain, a time window) from
 * a PRNG; the service and the SQL baseline draw the same sequence.
 */
function variants(seed) {
  const windowMs = Math.max(1, Math.floor(seed.total * seed.stepMs * 0.01));
  const timeWindow = (random) => {
    const k = Math.floor(random() * seed.total * 0.99);
    const after = seed.timeOf(k);
    return { after, before: new Date(Date.parse(after) + windowMs).toISOString() };
  };
  return [
    { key: 'none', title: 'no filter', draw: () => ({}) },
    {
      key: 'actor',
      title: 'actor=',
      draw: (random) => ({ actor: seed.actors[Math.floor(random() * seed.actors.length)] }),
    },
    {
      key: 'chain_id',
      title: 'chain_id=',
      draw: (random) => ({ chain_id: seed.chains[Math.floor(random() * seed.chains.length)].id }),
    },
    { key: 'window', title: 'after= & before= (1% of the time span)', draw: timeWindow },
  ];
}

function pathOf(filters) {
  const params = new URLSearchParams({ limit: '50', ...filters });
  return `/v1/events?${params.toString()}`;
}

/**
 * The statement and its values for the account `accountId` (`acc_…`) and `filters` (a `chain_id` is
 * `chn_…`): the ids bound as the columns store them, ulidToUuid of each, converted per request as the
 * service's filters convert them.
 */
function sqlOf(accountId, filters) {
  const where = ['e.account_id = $1'];
  const values = [ulidToUuid(accountId)];
  const add = (clause, value) => {
    values.push(value);
    where.push(clause.replace('?', `$${values.length}`));
  };
  if (filters.actor !== undefined) add('e.actor = ?', filters.actor);
  if (filters.chain_id !== undefined) add('e.chain_id = ?', ulidToUuid(filters.chain_id));
  if (filters.after !== undefined) add('e."timestamp" > ?', filters.after);
  if (filters.before !== undefined) add('e."timestamp" < ?', filters.before);
  return { text: `${SELECT} WHERE ${where.join(' AND ')} ORDER BY e."timestamp" DESC, e.id DESC LIMIT 51`, values };
}

async function listScenario(ctx) {
  const { cfg, seed } = ctx;
  const check = await probe(ctx, pathOf({}));
  if (check.status !== 200) return [{ id: 'list', title: 'list', unit: 'req/s', available: unavailable(check) }];
  const out = [];
  for (const variant of variants(seed)) {
    const first = await probe(ctx, pathOf(variant.draw(prng(1))));
    const window = ctx.sampler.open();
    const serviceRandom = prng(7);
    const singleRandom = prng(7);
    const sqlRandom = prng(7);
    const quietRandom = prng(7);
    const result = await compareRuns({
      ctx,
      label: `list ${variant.key}`,
      contenders: [
        serviceGets(ctx, 'service', cfg.readConnections, () => pathOf(variant.draw(serviceRandom))),
        // The same requests one at a time: latency without queueing behind other requests.
        serviceGets(ctx, 'single', 1, () => pathOf(variant.draw(singleRandom))),
        quietContender(ctx, (c) =>
          serviceGets(c, 'service', cfg.readConnections, () => pathOf(variant.draw(quietRandom))),
        ),
        {
          key: 'sql',
          run: (seconds) =>
            loopLoad({
              loops: cfg.readConnections,
              seconds,
              op: () => ctx.readPool.query(sqlOf(ctx.accounts.bench, variant.draw(sqlRandom))),
            }),
        },
      ],
    });
    out.push({
      id: `list-${variant.key}`,
      title: `list, page of 50, ${variant.title}, ${seed.total.toLocaleString('en-US')} events, ${cfg.readConnections} conns`,
      unit: 'req/s',
      service: result.service,
      serverPeakRss: window.close().peak,
      baselines: [
        {
          key: 'sql',
          title: `same SQL via pg, pool ${cfg.readPoolSize}, ${cfg.readConnections} loops`,
          summary: result.sql,
          target: { minRatio: 0.5 },
        },
        quietBaseline(result),
      ],
      checks: [{ label: 'p99 at 1 connection', value: result.single.p99, unit: 'ms', max: 20 }],
      single: result.single,
      notes: [
        `at 1 connection: ${Math.round(result.single.throughput)} req/s, p50 ${result.single.p50} ms, p99 ${result.single.p99} ms; at ${cfg.readConnections}: p99 ${result.service.p99} ms`,
        `first page: HTTP ${first.status}, ${Array.isArray(first.body && first.body.data) ? first.body.data.length : '?'} events${first.body && first.body.nextCursor ? ' + nextCursor' : ''}`,
      ],
    });
  }
  return out;
}

module.exports = { listScenario, sqlOf, SELECT };
