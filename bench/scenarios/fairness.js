'use strict';

const { httpLoad } = require('../lib/load');
const { compareRuns, probe, unavailable } = require('./common');

/** Clients of the noisy account, each looping its request back to back (issue 26 item 7: 20). */
const NOISY_CONNECTIONS = 20;
/** The most expensive read: 32 negated context terms (each holds almost everywhere, so nothing narrows the scan). */
const NOISY_Q = Array.from({ length: 32 }, (_, i) => `-context.f${i}:"v${i}"`).join(' ');
const DAY_MS = 86_400_000;

/**
 * Statistics by resource over 365 days (the longest period statistics take) ending at the seed's
 * last event, with NOISY_Q: every event of the seeded account is read and its context tested
 * 32 times, however many the service lets run at once.
 */
function noisyPath(seed) {
  const before = seed.timeOf(seed.total - 1);
  const after = new Date(Date.parse(before) - 365 * DAY_MS).toISOString();
  return `/v1/stats/events?${new URLSearchParams({ group_by: 'resource', after, before, q: NOISY_Q })}`;
}

const VICTIM_PATH = '/v1/events?limit=1';

/**
 * Issue 26 item 7, docs/contract.md §8 "No tenant starves another": another account's GET
 * /v1/events?limit=1 on one connection, alone (the baseline) and while the seeded account's 20
 * clients loop NOISY_Q's statistics (each sends its next request as soon as an answer arrives,
 * a 429 included: the worst a client can do, not a polite one). Target: p99 under 100 ms. The
 * noisy account's answers are counted by status in the notes (200s, 429 beyond READS_PER_ACCOUNT,
 * 422 past QUERY_TIMEOUT_SECONDS).
 */
async function fairnessScenario(ctx) {
  const { cfg, seed } = ctx;
  const victim = { ...ctx, headers: { authorization: `Bearer ${ctx.keys.ingest}` } };
  const noisy = { ...ctx, headers: { authorization: `Bearer ${ctx.keys.bench}` } };
  // The victim's account gets a page to read (the ingest scenarios may have filled it already).
  const appended = await fetch(`${ctx.serviceUrl}/v1/events/batch`, {
    method: 'POST',
    headers: { ...victim.headers, 'content-type': 'application/json' },
    body: JSON.stringify({
      events: Array.from({ length: 100 }, (_, i) => ({
        actor: `user_${i}`,
        action: 'fairness.seed',
        chain: 'fairness',
      })),
    }),
  });
  if (appended.status !== 201)
    return [
      {
        id: 'fairness',
        title: 'fairness',
        available: unavailable({ status: appended.status, body: await appended.json() }),
      },
    ];
  const check = await probe(victim, VICTIM_PATH);
  if (check.status !== 200) return [{ id: 'fairness', title: 'fairness', available: unavailable(check) }];
  const started = Date.now();
  const first = await probe(noisy, noisyPath(seed));
  const noisySeconds = (Date.now() - started) / 1000;

  const noisyStatuses = [];
  const load = (target, connections, seconds, path) =>
    httpLoad({
      url: ctx.serviceUrl,
      connections,
      seconds,
      headers: target.headers,
      next: () => ({ method: 'GET', path }),
    });
  const result = await compareRuns({
    ctx,
    label: 'fairness',
    contenders: [
      { key: 'alone', run: (seconds) => load(victim, 1, seconds, VICTIM_PATH) },
      {
        key: 'noisy',
        run: async (seconds) => {
          const [measured, noise] = await Promise.all([
            load(victim, 1, seconds, VICTIM_PATH),
            load(noisy, NOISY_CONNECTIONS, seconds, noisyPath(seed)),
          ]);
          noisyStatuses.push(noise.statusCodes);
          return measured;
        },
      },
    ],
  });
  const statuses = {};
  for (const counts of noisyStatuses)
    for (const [code, n] of Object.entries(counts)) statuses[code] = (statuses[code] || 0) + n;
  return [
    {
      id: 'fairness',
      title: `another account's GET ${VICTIM_PATH}, 1 connection, while ${NOISY_CONNECTIONS} clients of the seeded account (${seed.total.toLocaleString('en-US')} events) loop statistics by resource over 365 days with 32 negated context terms`,
      unit: 'req/s',
      service: result.noisy,
      baselines: [{ key: 'alone', title: 'the same request without the noisy account', summary: result.alone }],
      checks: [{ label: 'p99 with the noisy account', value: result.noisy.p99, unit: 'ms', max: 100 }],
      notes: [
        `alone: p50 ${result.alone.p50} ms, p99 ${result.alone.p99} ms; with the noise: p50 ${result.noisy.p50} ms, p99 ${result.noisy.p99} ms`,
        `one noisy request alone: HTTP ${first.status} in ${noisySeconds.toFixed(2)} s`,
        `noisy account's answers over every run (warm-up included): ${JSON.stringify(statuses)}`,
      ],
    },
  ];
}

module.exports = { fairnessScenario, NOISY_Q };
