'use strict';

const { uuidToUlid } = require('../lib/ids');
const { httpLoad } = require('../lib/load');
const { median, spread } = require('../lib/stats');

/** Median of each figure over the runs, and how far apart the runs' throughputs were. */
function summarize(runs) {
  return {
    throughput: median(runs.map((r) => r.throughput)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    spread: spread(runs.map((r) => r.throughput)),
    failed: runs.reduce((n, r) => n + (r.non2xx || 0) + (r.errors || 0) + (r.timeouts || 0), 0),
    statusCodes: mergeCounts(runs.map((r) => r.statusCodes || {})),
    cpu: medianCpu(runs),
    runs,
  };
}

function mergeCounts(list) {
  const total = {};
  for (const counts of list) for (const [k, v] of Object.entries(counts)) total[k] = (total[k] || 0) + v;
  return total;
}

/**
 * Runs every contender once for the warm-up (discarded), then `runs` times interleaved
 * (service, baseline, service, baseline, …) so that drift of the machine hits all of them alike.
 * The order is reversed every other round, so that no contender always runs right after the same
 * one: a baseline's aftermath (its writes being checkpointed, an autovacuum it set off) falls on
 * each contender alike.
 */
async function compareRuns({ ctx, label, contenders }) {
  const { cfg, log, cpu } = ctx;
  if (cfg.warmupSeconds > 0) {
    for (const c of contenders) await c.run(cfg.warmupSeconds);
  }
  const results = Object.fromEntries(contenders.map((c) => [c.key, []]));
  for (let r = 0; r < cfg.runs; r++) {
    for (const c of r % 2 === 0 ? contenders : [...contenders].reverse()) {
      const before = cpu.snapshot();
      const result = await c.run(cfg.seconds);
      result.cpu = cpu.between(before, cpu.snapshot());
      results[c.key].push(result);
      log(
        `  ${label} · ${c.key} run ${r + 1}/${cfg.runs}: ${fmt(result.throughput)}/s, p50 ${ms(result.p50)}, p99 ${ms(result.p99)}${failures(result)} · cores ${cores(result.cpu)}`,
      );
    }
  }
  return Object.fromEntries(Object.entries(results).map(([k, runs]) => [k, summarize(runs)]));
}

/** "service 0.9 · postgres 0.7 · bench 0.3 · other 0.0 · idle 0.1" */
function cores(cpu) {
  return Object.entries(cpu)
    .map(([k, v]) => `${k} ${v.toFixed(1)}`)
    .join(' · ');
}

function medianCpu(runs) {
  const keys = [...new Set(runs.flatMap((r) => Object.keys(r.cpu || {})))];
  return Object.fromEntries(keys.map((k) => [k, median(runs.map((r) => (r.cpu ? r.cpu[k] || 0 : 0)))]));
}

function failures(result) {
  const parts = [];
  if (result.non2xx) parts.push(`${result.non2xx} non-2xx ${JSON.stringify(result.statusCodes)}`);
  if (result.errors) parts.push(`${result.errors} errors${result.firstError ? ` (${result.firstError})` : ''}`);
  if (result.timeouts) parts.push(`${result.timeouts} timeouts`);
  return parts.length ? ` [${parts.join(', ')}]` : '';
}

const fmt = (n) => (n === null || n === undefined ? '—' : Math.round(n).toLocaleString('en-US'));
const ms = (n) => (n === null || n === undefined ? '—' : `${n < 10 ? n.toFixed(1) : Math.round(n)} ms`);

/** One request to the service, its status and parsed body (or text). */
async function probe(ctx, path) {
  const response = await fetch(`${ctx.serviceUrl}${path}`, { headers: { authorization: ctx.headers.authorization } });
  const text = await response.text();
  let body = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON (CSV)
  }
  return { status: response.status, body, text, headers: response.headers };
}

/** "not available (HTTP 404 NOT_FOUND)" for an endpoint that is not there (yet). */
function unavailable(result) {
  const code = result.body && result.body.error ? ` ${result.body.error.code}` : '';
  return `not available (HTTP ${result.status}${code})`;
}

/** The body of one appended event; the same shape for the service and for the raw-pg baseline. */
function eventBody(k, chain) {
  return {
    actor: `user_${k % 1000}`,
    action: 'document.update',
    resource: `doc:${k % 5000}`,
    context: { ip: '10.0.0.1', session: `s_${k}`, n: k },
    chain,
  };
}

/** Sends the requests `next()` builds to the service, with its key, over `connections` connections for `seconds`. */
function serviceLoad(ctx, connections, seconds, next) {
  return httpLoad({ url: ctx.serviceUrl, connections, seconds, headers: ctx.headers, next });
}

/**
 * A contender keyed `key` that appends to the service at `serviceUrl`: `single` events over 64
 * chains on BENCH_CONNECTIONS connections, or `batch`es of BENCH_BATCH_SIZE over 64 chains on
 * BENCH_BATCH_CONNECTIONS (its throughput counts requests).
 */
function appendContender(ctx, key, serviceUrl, kind) {
  const { cfg } = ctx;
  let k = 0;
  const next =
    kind === 'single'
      ? () => {
          const n = k++;
          return { method: 'POST', path: '/v1/events', body: JSON.stringify(eventBody(n, `c${n % 64}`)) };
        }
      : () => {
          const events = Array.from({ length: cfg.batchSize }, () => {
            const n = k++;
            return eventBody(n, `b${n % 64}`);
          });
          return { method: 'POST', path: '/v1/events/batch', body: JSON.stringify({ events }) };
        };
  const connections = kind === 'single' ? cfg.ingestConnections : cfg.batchConnections;
  return { key, run: (seconds) => serviceLoad({ ...ctx, serviceUrl }, connections, seconds, next) };
}

/** A contender that sends GETs of `nextPath()` to the service over `connections` connections. */
function serviceGets(ctx, key, connections, nextPath) {
  return { key, run: (seconds) => serviceLoad(ctx, connections, seconds, () => ({ method: 'GET', path: nextPath() })) };
}

/**
 * Issue 18's A/B: the same contender pointed at the same build on the same database with
 * observability off (METRICS_PORT=0 LOG_LEVEL=silent: no request log line, no metrics
 * middleware), keyed `quiet`. The measured service runs with both on (LOG_LEVEL=info to its log
 * file, METRICS_PORT on a free port).
 */
function quietContender(ctx, contender) {
  if (!ctx.quiet) throw new Error('the service without observability was not started');
  return { ...contender({ ...ctx, serviceUrl: ctx.quiet.serviceUrl }), key: 'quiet' };
}

/** The baseline row of the `quiet` contender: metrics and logs may cost at most 5 % (issue 18). */
function quietBaseline(result) {
  return {
    key: 'quiet',
    title: 'same service, same database, observability off (METRICS_PORT=0 LOG_LEVEL=silent)',
    summary: result.quiet,
    target: { minRatio: 0.95 },
  };
}

/**
 * The hash of a stored events row (snake_case columns) of the current schema, recomputed with the
 * service's hashing lib. The hash covers the ids as the API writes them: the row's `id` and
 * `chain_id` are uuids' text (migration 1765900000000), converted here per row as
 * the service's verification does (`chainId`, when given, is the chain's id already, `chn_…`).
 */
function rowHash(hashing, row, chainId = uuidToUlid('chn', row.chain_id)) {
  // By the event's own rule: version 2 with its seed or an erasure's secrets, else version 1.
  return hashing.recomputeStoredHash({
    saltSeed: row.salt_seed ?? null,
    erasure: row.erasure ?? null,
    id: uuidToUlid('evt', row.id),
    chainId,
    position: Number(row.position),
    actor: row.actor,
    action: row.action,
    resource: row.resource,
    context: row.context,
    timestamp: row.timestamp.toISOString(),
    previousHash: row.previous_hash,
  });
}

module.exports = {
  summarize,
  compareRuns,
  probe,
  unavailable,
  appendContender,
  eventBody,
  serviceLoad,
  serviceGets,
  quietContender,
  quietBaseline,
  rowHash,
  fmt,
  ms,
  cores,
};
