'use strict';

const http = require('node:http');
const { ulidToUuid } = require('../lib/ids');
const { percentileOfSorted, sorted } = require('../lib/stats');
const { eventBody, serviceLoad } = require('./common');

/**
 * The live tail, GET /v1/events/stream (docs/contract.md §13; issue 26):
 * - `tail-backlog`: how fast a reader that keeps reading gets a backlog of BENCH_TAIL_BACKLOG
 *   committed events (appended in batches, then read with the Last-Event-ID of an event before
 *   them). Target ≥ 10,000 events/s, none missing or repeated.
 * - `tail`: one stream of every event of the account while the bench's full ingest runs (64
 *   connections of single appends over 64 chains, as ingest-spread; BENCH_TAIL_BATCH_EVERY mixes
 *   in batches) for BENCH_TAIL_SECONDS: each event's latency from its `timestamp` (taken when it is
 *   appended, on this machine's clock) to its arrival, p99 ≤ 2 s, and none of the events committed
 *   meanwhile (counted in the database) missing or repeated.
 *   A marker event appended every 100 ms on a connection of its own also gives the latency from
 *   its 201 to its arrival.
 */
async function tailScenario(ctx) {
  return [await backlog(ctx), await underLoad(ctx)];
}

async function backlog(ctx) {
  const { cfg, log } = ctx;
  const startId = await positionBeforeNow(ctx);
  const appended = await appendBacklog(ctx, cfg.tailBacklog);
  log(`  tail-backlog: ${appended.size.toLocaleString('en-US')} events appended; reading them from a position before`);
  const started = performance.now();
  let last = started;
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  const received = new Set();
  let repeated = 0;
  const stream = await openStream(ctx, { lastEventId: startId }, (event) => {
    if (received.has(event.id)) repeated++;
    received.add(event.id);
    last = performance.now();
    if (received.size >= appended.size) done();
  });
  const deadline = setTimeout(done, Math.max(30_000, appended.size / 2)); // 2,000 events/s at the least
  await finished;
  clearTimeout(deadline);
  stream.destroy();
  const seconds = (last - started) / 1000;
  const missing = [...appended].filter((id) => !received.has(id)).length;
  const rate = (appended.size - missing) / seconds;
  return {
    id: 'tail-backlog',
    title: `live tail: a backlog of ${appended.size.toLocaleString('en-US')} committed events, read by a stream that keeps reading`,
    unit: 'events/s',
    service: { throughput: rate, p50: null, p99: null, spread: 0, failed: 0, runs: [] },
    baselines: [],
    checks: [
      { label: 'events/s from a backlog', value: Math.round(rate), unit: 'events/s', min: 10_000 },
      { label: 'backlog events never streamed', value: missing, unit: '', max: 0 },
      { label: 'backlog events streamed twice', value: repeated, unit: '', max: 0 },
    ],
    notes: [
      `${received.size.toLocaleString('en-US')} events in ${seconds.toFixed(2)} s from the request (the first page included)`,
    ],
  };
}

async function underLoad(ctx) {
  const { cfg, log } = ctx;
  const seconds = cfg.tailSeconds;
  const received = new Map();
  const latencies = [];
  let repeated = 0;
  const before = await countEvents(ctx);
  const stream = await openStream(ctx, {}, (event, at) => {
    if (received.has(event.id)) repeated++;
    received.set(event.id, at);
    latencies.push(at - Date.parse(event.timestamp));
  });
  const markers = new Map();
  const stopAt = Date.now() + seconds * 1000;
  const marking = (async () => {
    while (Date.now() < stopAt) {
      const response = await fetch(`${ctx.serviceUrl}/v1/events`, {
        method: 'POST',
        headers: ctx.headers,
        body: JSON.stringify({ actor: 'tail-marker', action: 'bench.tail', chain: 'tail' }),
      });
      const at = Date.now();
      if (response.status === 201) markers.set((await response.json()).data.id, at);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  let k = 0;
  const load = await serviceLoad(ctx, cfg.ingestConnections, seconds, () => {
    const n = k++;
    if (cfg.tailBatchEvery > 0 && n % cfg.tailBatchEvery === cfg.tailBatchEvery - 1) {
      const events = Array.from({ length: cfg.batchSize }, (_, i) => eventBody(n * 1000 + i, `c${(n + i) % 64}`));
      return { method: 'POST', path: '/v1/events/batch', body: JSON.stringify({ events }) };
    }
    return { method: 'POST', path: '/v1/events', body: JSON.stringify(eventBody(n, `c${n % 64}`)) };
  });
  await marking;
  // Every event committed since the stream opened, whatever its request's fate: all of them must arrive.
  const committed = (await countEvents(ctx)) - before;
  const deadline = Date.now() + 10_000;
  while (received.size < committed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  await new Promise((resolve) => setTimeout(resolve, 200));
  stream.destroy();
  const all = sorted(latencies);
  const markerLatencies = sorted(
    [...markers].filter(([id]) => received.has(id)).map(([id, at]) => received.get(id) - at),
  );
  const missingMarkers = markers.size - markerLatencies.length;
  const missing = Math.max(0, committed - received.size);
  const p99 = percentileOfSorted(all, 99);
  log(
    `  tail: ${received.size.toLocaleString('en-US')} of ${committed.toLocaleString('en-US')} committed events streamed; p99 ${p99} ms`,
  );
  return {
    id: 'tail',
    title: `live tail: every event of ${cfg.ingestConnections} connections appending over 64 chains for ${seconds} s${cfg.tailBatchEvery > 0 ? ` (every ${cfg.tailBatchEvery}th request a batch of ${cfg.batchSize})` : ''}, append → SSE`,
    unit: 'events/s',
    service: {
      throughput: received.size / seconds,
      p50: percentileOfSorted(all, 50),
      p99,
      spread: 0,
      failed: load.non2xx + load.errors + load.timeouts,
      runs: [],
    },
    baselines: [],
    checks: [
      { label: 'p99 append → stream, every event', value: p99, unit: 'ms', max: 2000 },
      { label: 'committed events never streamed', value: missing, unit: '', max: 0 },
      { label: 'acknowledged markers never streamed', value: missingMarkers, unit: '', max: 0 },
      { label: 'events streamed twice', value: repeated, unit: '', max: 0 },
      { label: 'p99 marker 201 → stream', value: percentileOfSorted(markerLatencies, 99), unit: 'ms', max: 2000 },
    ],
    notes: [
      `${received.size.toLocaleString('en-US')} events streamed of ${committed.toLocaleString('en-US')} committed (ingest ${Math.round(load.throughput)} requests/s); latency from each event's timestamp p50 ${percentileOfSorted(all, 50)} ms, p99 ${p99} ms, max ${all.at(-1)} ms; ${markers.size} markers 201 → stream p50 ${percentileOfSorted(markerLatencies, 50)} ms, p99 ${percentileOfSorted(markerLatencies, 99)} ms`,
    ],
  };
}

/** The events of the account the bench appends with (ctx.headers' key), committed so far. */
async function countEvents(ctx) {
  const { rows } = await ctx.db.query('SELECT count(*)::int8 AS n FROM events WHERE account_id = $1', [
    ulidToUuid(ctx.accounts.ingest),
  ]);
  return Number(rows[0].n);
}

/** The id of an event appended now, read from a stream: a Last-Event-ID before whatever is appended next. */
async function positionBeforeNow(ctx) {
  let resolveId;
  const id = new Promise((resolve) => (resolveId = resolve));
  const stream = await openStream(ctx, {}, (_event, _at, eventId) => resolveId(eventId));
  const response = await fetch(`${ctx.serviceUrl}/v1/events`, {
    method: 'POST',
    headers: ctx.headers,
    body: JSON.stringify({ actor: 'tail-start', action: 'bench.tail', chain: 'tail' }),
  });
  if (response.status !== 201) throw new Error(`tail-backlog: append answered ${response.status}`);
  const lastEventId = await id;
  stream.destroy();
  return lastEventId;
}

/** `total` events in batches of up to 1,000 over 64 chains, 4 requests at a time; their ids. */
async function appendBacklog(ctx, total) {
  const ids = new Set();
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < total) {
        const first = next;
        next = Math.min(total, next + 1000);
        const events = Array.from({ length: next - first }, (_, i) => eventBody(first + i, `c${(first + i) % 64}`));
        const response = await fetch(`${ctx.serviceUrl}/v1/events/batch`, {
          method: 'POST',
          headers: ctx.headers,
          body: JSON.stringify({ events }),
        });
        if (response.status !== 201) throw new Error(`tail-backlog: batch answered ${response.status}`);
        for (const event of (await response.json()).data) ids.add(event.id);
      }
    }),
  );
  return ids;
}

/**
 * An SSE reader that takes everything as it comes: calls `onEvent({ id, timestamp }, arrivalTime,
 * sseId)` per event; resolves once the stream is open.
 */
function openStream(ctx, { lastEventId }, onEvent) {
  return new Promise((resolve, reject) => {
    const headers = { authorization: ctx.headers.authorization };
    if (lastEventId) headers['last-event-id'] = lastEventId;
    const req = http.get(`${ctx.serviceUrl}/v1/events/stream`, { headers }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream: HTTP ${res.statusCode}`));
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk) => {
        const at = Date.now();
        buffer += chunk;
        let start = 0;
        let end;
        while ((end = buffer.indexOf('\n\n', start)) !== -1) {
          const block = buffer.slice(start, end);
          start = end + 2;
          if (block.startsWith(':')) {
            resolve(req);
            continue;
          }
          const data = block.indexOf('\ndata: ');
          if (data === -1) continue;
          const event = JSON.parse(block.slice(data + 7));
          onEvent(event, at, block.slice(4, block.indexOf('\n')));
        }
        buffer = buffer.slice(start);
      });
    });
    req.on('error', reject);
  });
}

module.exports = { tailScenario };
