'use strict';

const autocannon = require('autocannon');
const { percentileOfSorted, sorted } = require('./stats');

/**
 * HTTP load with autocannon's programmatic API: `connections` keep-alive connections for
 * `seconds`, each request built by `next()` → { method, path, body? }. Only 2xx responses count
 * towards throughput; everything else is reported.
 */
async function httpLoad({ url, connections, seconds, headers, next }) {
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    pipelining: 1,
    timeout: 30,
    headers,
    requests: [
      {
        setupRequest: (request) => {
          const r = next();
          request.method = r.method;
          request.path = r.path;
          if (r.body !== undefined) request.body = r.body;
          return request;
        },
      },
    ],
  });
  const statusCodes = {};
  for (const [code, stats] of Object.entries(result.statusCodeStats || {})) statusCodes[code] = stats.count;
  const ok = result['2xx'];
  return {
    throughput: ok / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
    seconds: result.duration,
  };
}

/**
 * The same measurement for work done directly against the database: `loops` concurrent loops
 * each calling `op(loopIndex)` back to back until `seconds` have passed. Latency is measured
 * per call, with the same percentile definition as autocannon's (nearest rank, in ms).
 */
async function loopLoad({ loops, seconds, op }) {
  const latencies = [];
  let errors = 0;
  let firstError = null;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: loops }, async (_, i) => {
      while (performance.now() < deadline) {
        const t0 = performance.now();
        try {
          await op(i);
          latencies.push(performance.now() - t0);
        } catch (error) {
          errors++;
          firstError = firstError || error;
          if (errors > 100) throw new Error(`more than 100 errors in a database loop; first: ${firstError.message}`);
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  const s = sorted(latencies);
  return {
    throughput: latencies.length / elapsed,
    p50: percentileOfSorted(s, 50),
    p99: percentileOfSorted(s, 99),
    ok: latencies.length,
    errors,
    firstError: firstError ? firstError.message : undefined,
    seconds: elapsed,
  };
}

module.exports = { httpLoad, loopLoad };
