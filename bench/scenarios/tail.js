'use strict';

const http = require('node:http');
const { percentileOfSorted } = require('../lib/stats');
const { eventBody, serviceLoad } = require('./common');

/**
 * Issue 20: how long after its 201 an event reaches a live tail (GET /v1/events/stream) while
 * ingest runs at full speed (64 connections over 64 chains, as ingest-spread). A marker event is
 * appended every 100 ms on a connection of its own; the stream (q=actor:tail-marker, so it scans
 * every appended event but sends only the markers) records when each arrives.
 */
async function tailScenario(ctx) {
  const { cfg } = ctx;
  const runs = [];
  for (let r = 0; r < cfg.runs; r++) runs.push(await oneRun(ctx, r));
  const latencies = runs.flatMap((run) => run.latencies).sort((a, b) => a - b);
  const missing = runs.reduce((n, run) => n + run.missing, 0);
  const load = runs.map((run) => run.load.throughput).sort((a, b) => a - b)[Math.floor(runs.length / 2)];
  const p99 = percentileOfSorted(latencies, 99);
  return [
    {
      id: 'tail',
      title: `live tail: a marker's 201 → its SSE event, while ${cfg.ingestConnections} connections append over 64 chains`,
      unit: 'events/s',
      service: { throughput: load, p50: percentileOfSorted(latencies, 50), p99, spread: 0, failed: missing, runs: [] },
      baselines: [],
      checks: [
        { label: 'p99 201 → stream', value: p99, unit: 'ms', max: 1000 },
        { label: 'markers never streamed', value: missing, unit: '', max: 0 },
      ],
      notes: [
        `${latencies.length} markers over ${cfg.runs} runs of ${cfg.seconds} s; latency p50 ${percentileOfSorted(latencies, 50)} ms, p99 ${p99} ms, max ${latencies.at(-1)} ms; ingest ${Math.round(load)} events/s (median run)`,
      ],
    },
  ];
}

async function oneRun(ctx, r) {
  const { cfg } = ctx;
  const arrived = new Map();
  const stream = await openStream(ctx, (id, at) => arrived.set(id, at));
  const acknowledged = new Map();
  let k = r * 10_000_000;
  const stopAt = Date.now() + cfg.seconds * 1000;
  const markers = (async () => {
    while (Date.now() < stopAt) {
      const response = await fetch(`${ctx.serviceUrl}/v1/events`, {
        method: 'POST',
        headers: ctx.headers,
        body: JSON.stringify({ actor: 'tail-marker', action: 'bench.tail', chain: 'tail' }),
      });
      const at = Date.now();
      if (response.status === 201) acknowledged.set((await response.json()).data.id, at);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  const load = await serviceLoad(ctx, cfg.ingestConnections, cfg.seconds, () => {
    const n = k++;
    return { method: 'POST', path: '/v1/events', body: JSON.stringify(eventBody(n, `c${n % 64}`)) };
  });
  await markers;
  const deadline = Date.now() + 5000;
  while ([...acknowledged.keys()].some((id) => !arrived.has(id)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  stream.destroy();
  const latencies = [...acknowledged].filter(([id]) => arrived.has(id)).map(([id, at]) => arrived.get(id) - at);
  return { latencies, missing: acknowledged.size - latencies.length, load };
}

/** An SSE reader of the markers: calls `onEvent(eventId, arrivalTime)`; resolves once the stream is open. */
function openStream(ctx, onEvent) {
  return new Promise((resolve, reject) => {
    const url = new URL(`${ctx.serviceUrl}/v1/events/stream?q=${encodeURIComponent('actor:tail-marker')}`);
    const req = http.get(url, { headers: { authorization: ctx.headers.authorization } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream: HTTP ${res.statusCode}`));
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk) => {
        const at = Date.now();
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) !== -1) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const data = block.split('\n').find((line) => line.startsWith('data: '));
          if (data) onEvent(JSON.parse(data.slice(6)).id, at);
          else resolve(req);
        }
      });
    });
    req.on('error', reject);
  });
}

module.exports = { tailScenario };
