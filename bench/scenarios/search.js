'use strict';

const { ulidToUuid } = require('../lib/ids');
const { loopLoad } = require('../lib/load');
const { prng } = require('../lib/stats');
const { compareRuns, probe, serviceGets, unavailable } = require('./common');

/** The columns EventsRepository reads for a page (RECORD_COLUMNS). */
const COLUMNS = `e.id, e.account_id, e.chain_id, c.name AS chain_name, e.position, e.actor, e.action, e.resource,
       e.context, e."timestamp", e.previous_hash, e.hash`;

/**
 * Issue 20: `q` with an action prefix and one context term, the seed's `ip` (an address a few
 * events share), against the statement EventsRepository.matching builds for it, sent via `pg`.
 */
function searchDraw(random) {
  const k = Math.floor(random() * 1_000_000);
  const ip = `10.${k % 250}.${(k >> 8) % 250}.${k % 7}`;
  const prefix = ['user.', 'document.', 'role.', 'invoice.'][Math.floor(random() * 4)];
  return { prefix, ip };
}

const searchPath = ({ prefix, ip }) =>
  `/v1/events?${new URLSearchParams({ limit: '50', q: `action:${prefix}* context.ip:"${ip}"` })}`;

const searchSql = (accountId, { prefix, ip }) => ({
  text: `SELECT ${COLUMNS} FROM events e JOIN chains c ON c.id = e.chain_id
          WHERE e.account_id = $1 AND starts_with(e.action, $2) AND e.context @> $3::jsonb
          ORDER BY e."timestamp" DESC, e.id DESC LIMIT 51`,
  values: [ulidToUuid(accountId), prefix, JSON.stringify({ ip })],
});

async function searchScenario(ctx) {
  const { cfg, seed } = ctx;
  const check = await probe(ctx, searchPath(searchDraw(prng(1))));
  if (check.status !== 200) return [{ id: 'search', title: 'search', unit: 'req/s', available: unavailable(check) }];
  const [service, single, sql] = [prng(11), prng(11), prng(11)];
  const result = await compareRuns({
    ctx,
    label: 'search',
    contenders: [
      serviceGets(ctx, 'single', 1, () => searchPath(searchDraw(single))),
      serviceGets(ctx, 'service', cfg.readConnections, () => searchPath(searchDraw(service))),
      {
        key: 'sql',
        run: (seconds) =>
          loopLoad({ loops: 1, seconds, op: () => ctx.readPool.query(searchSql(ctx.accounts.bench, searchDraw(sql))) }),
      },
    ],
  });
  return [
    {
      id: 'search',
      title: `q=action:<prefix>* context.ip:"<ip>", page of 50, ${seed.total.toLocaleString('en-US')} events, 1 connection`,
      unit: 'req/s',
      service: result.single,
      baselines: [
        { key: 'sql', title: 'the same statement via pg, 1 loop', summary: result.sql, target: { minRatio: 0.5 } },
      ],
      checks: [{ label: 'p99 at 1 connection', value: result.single.p99, unit: 'ms', max: 50 }],
      notes: [
        `at ${cfg.readConnections} connections: ${Math.round(result.service.throughput)} req/s, p99 ${result.service.p99} ms`,
        `first page: HTTP ${check.status}, ${Array.isArray(check.body && check.body.data) ? check.body.data.length : '?'} events`,
      ],
    },
  ];
}

/**
 * Issue 20: GET /v1/stats/events by day over the seed's 30 days, and by action over the same
 * range (every seeded event in range), against the GROUP BY over the events, via `pg`: the
 * issue's "equivalent GROUP BY", which the service answers from `event_counts` instead (whole
 * days; the seed's COPY fills it through the triggers) and the events at the edges.
 */
function statsVariants(seed) {
  const after = seed.timeOf(0);
  const before = seed.timeOf(seed.total - 1);
  return [
    {
      key: 'day',
      path: `/v1/stats/events?${new URLSearchParams({ after, before, group_by: 'day' })}`,
      sql: (accountId) => ({
        text: `WITH counted AS (
                 SELECT date_trunc('day', e."timestamp" AT TIME ZONE 'UTC') AS bucket, count(*)::int AS count
                   FROM events e JOIN chains c ON c.id = e.chain_id
                  WHERE e.account_id = $1 AND e."timestamp" >= $2::timestamptz AND e."timestamp" <= $3::timestamptz
                  GROUP BY 1)
               SELECT to_char(b.bucket, 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS key, coalesce(c.count, 0) AS count
                 FROM generate_series(date_trunc('day', $2::timestamptz AT TIME ZONE 'UTC'),
                                      date_trunc('day', $3::timestamptz AT TIME ZONE 'UTC'), interval '1 day') AS b(bucket)
                 LEFT JOIN counted c ON c.bucket = b.bucket ORDER BY b.bucket`,
        values: [ulidToUuid(accountId), after, before],
      }),
    },
    {
      key: 'action',
      path: `/v1/stats/events?${new URLSearchParams({ after, before, group_by: 'action' })}`,
      sql: (accountId) => ({
        text: `SELECT key, count::int AS count, (sum(count) OVER ())::int8::text AS total
                 FROM (SELECT e.action AS key, count(*) AS count FROM events e JOIN chains c ON c.id = e.chain_id
                        WHERE e.account_id = $1 AND e."timestamp" >= $2::timestamptz AND e."timestamp" <= $3::timestamptz
                        GROUP BY 1) AS g
                ORDER BY count DESC, key COLLATE "C" ASC NULLS LAST LIMIT 50`,
        values: [ulidToUuid(accountId), after, before],
      }),
    },
  ];
}

async function statsScenario(ctx) {
  const { seed } = ctx;
  const out = [];
  for (const variant of statsVariants(seed)) {
    const check = await probe(ctx, variant.path);
    if (check.status !== 200) {
      out.push({ id: `stats-${variant.key}`, title: 'stats', unit: 'req/s', available: unavailable(check) });
      continue;
    }
    const result = await compareRuns({
      ctx,
      label: `stats ${variant.key}`,
      contenders: [
        serviceGets(ctx, 'service', 1, () => variant.path),
        {
          key: 'sql',
          run: (seconds) =>
            loopLoad({ loops: 1, seconds, op: () => ctx.readPool.query(variant.sql(ctx.accounts.bench)) }),
        },
      ],
    });
    out.push({
      id: `stats-${variant.key}`,
      title: `stats by ${variant.key}, 30 days, ${check.body.total.toLocaleString('en-US')} events in range, 1 connection`,
      unit: 'req/s',
      service: result.service,
      baselines: [
        { key: 'sql', title: 'the same GROUP BY via pg, 1 loop', summary: result.sql, target: { minRatio: 0.8 } },
      ],
      checks: [{ label: 'p99', value: result.service.p99, unit: 'ms', max: 300 }],
      notes: [`${check.body.data.length} groups, total ${check.body.total}`],
    });
  }
  return out;
}

module.exports = { searchScenario, statsScenario, searchDraw, searchPath, statsVariants };
