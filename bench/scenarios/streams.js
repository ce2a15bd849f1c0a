'use strict';

const { destinationsApi } = require('../lib/destinations');
const { ulidToUuid } = require('../lib/ids');
const { sleep } = require('../lib/processes');
const { percentileOfSorted } = require('../lib/stats');
const { DeliveredEvents, WebhookReceiver } = require('../lib/webhook-receiver');
const { batchContender } = require('./batch');
const { compareRuns, fmt } = require('./common');

/** Every destination of the scenario sends batches of the most the contract allows. */
const DESTINATION_BATCH_SIZE = 1000;
/** The account's limit (DESTINATIONS_PER_ACCOUNT's default): issue 27's "10 active destinations". */
const INGEST_DESTINATIONS = 10;
/** The engine backs off up to 5 min between retries (docs/contract.md §16): the first 200 after an outage may wait that long. */
const MAX_BACKOFF_MS = 5 * 60_000;

/**
 * Streams (docs/contract.md §16; issue 27): webhook destinations of the ingest account delivering to a
 * receiver in the bench process (bench/lib/webhook-receiver.js) while the batch scenarios' load
 * runs (batches of BENCH_BATCH_SIZE over 64 chains on BENCH_BATCH_CONNECTIONS connections):
 * - `streams-lag`: one destination keeps up with that ingest, lag p99 ≤ 2 s, nothing committed lost;
 * - `streams-ingest`: ingest with 10 active destinations ≥ 0.9× ingest with them paused;
 * - `streams-backlog`: after BENCH_STREAMS_OUTAGE_SECONDS of 503s, the backlog at ≥ 20,000 events/s.
 * Every destination it makes is deleted at its end, whatever happens.
 */
async function streamsScenario(ctx) {
  const receiver = new WebhookReceiver();
  await receiver.start();
  const api = trackedApi(destinationsApi(ctx.serviceUrl, ctx.accounts.ingest, ctx.keys.ingestAdmin));
  try {
    const missing = await api.list().then(
      () => null,
      (error) => `not available (HTTP ${error.status} ${error.code || ''})`.replace(' )', ')'),
    );
    if (missing) return [{ id: 'streams', title: 'streams: webhook destinations under ingest', available: missing }];
    return [
      await lag(ctx, receiver, api),
      await ingestWithDestinations(ctx, receiver, api),
      await backlog(ctx, receiver, api),
    ];
  } finally {
    await api.removeAll();
    await receiver.stop();
  }
}

/** The API, remembering what it made so that the scenario leaves no destination behind. */
function trackedApi(api) {
  const made = new Set();
  return {
    ...api,
    createWebhook: async (name, url) => {
      const destination = await api.createWebhook(name, url, DESTINATION_BATCH_SIZE);
      made.add(destination.id);
      return destination;
    },
    remove: async (id) => {
      made.delete(id);
      return api.remove(id);
    },
    removeAll: async () => {
      for (const id of made) await api.remove(id).catch(() => undefined);
      made.clear();
    },
  };
}

/** The batch scenarios' load: batches of BENCH_BATCH_SIZE over chains b0…b63 on BENCH_BATCH_CONNECTIONS connections. */
function ingestLoad(ctx) {
  return batchContender(ctx, ctx.cfg.batchConnections, (k) => `b${k % 64}`);
}

/**
 * The account's `_audit` chain gets an event for each destination made, paused, resumed or deleted
 * (docs/contract.md §16), which only the destinations made before it receive: the scenario counts, in the
 * database and at the receiver, the events the load appends, every other chain.
 */
const AUDIT_CHAIN = '_audit';
const appended = (events) => events.filter((event) => event.chain.name !== AUDIT_CHAIN);

/**
 * The load's events committed so far, once the count stops moving: requests still in flight when
 * autocannon's run ends commit after it.
 */
async function committedEvents(ctx) {
  const count = async () => {
    const { rows } = await ctx.db.query(
      `SELECT count(*)::int8 AS n FROM events e JOIN chains c ON c.id = e.chain_id
        WHERE e.account_id = $1 AND c.name <> $2`,
      [ulidToUuid(ctx.accounts.ingest), AUDIT_CHAIN],
    );
    return Number(rows[0].n);
  };
  for (let last = await count(); ;) {
    await sleep(300);
    const now = await count();
    if (now === last) return now;
    last = now;
  }
}

/** Polls `done()` every 50 ms until it holds or `ms` passed; true when it held. */
async function waitFor(done, ms, progress) {
  const deadline = Date.now() + ms;
  let nextReport = Date.now() + 30_000;
  while (!done()) {
    if (Date.now() > deadline) return false;
    if (progress && Date.now() > nextReport) {
      progress();
      nextReport += 30_000;
    }
    await sleep(50);
  }
  return true;
}

async function lag(ctx, receiver, api) {
  const { cfg, log } = ctx;
  const seconds = cfg.streamsSeconds;
  const delivered = new DeliveredEvents();
  const lags = [];
  const route = receiver.route('lag', {
    onEvents: (events, at) => {
      for (const event of appended(events)) if (delivered.add(event)) lags.push(at - Date.parse(event.timestamp));
    },
  });
  const before = await committedEvents(ctx);
  const destination = await api.createWebhook('bench-streams-lag', route.url);
  log(
    `  streams-lag: one webhook destination (batchSize ${DESTINATION_BATCH_SIZE}) under full batch ingest for ${seconds} s`,
  );
  const load = await ingestLoad(ctx).run(seconds);
  // Every event committed since the destination was made, whatever its request's fate: all must arrive.
  const committed = (await committedEvents(ctx)) - before;
  await waitFor(() => delivered.distinct >= committed, 30_000);
  const seen = await api.get(destination.id);
  await api.remove(destination.id);
  const all = Float64Array.from(lags).sort();
  const p99 = percentileOfSorted(all, 99);
  const missing = Math.max(0, committed - delivered.distinct);
  log(`  streams-lag: ${fmt(delivered.distinct)} of ${fmt(committed)} committed events delivered; lag p99 ${p99} ms`);
  return {
    id: 'streams-lag',
    title: `streams: one webhook destination (batchSize ${DESTINATION_BATCH_SIZE}) of every event, batch ingest (${cfg.batchConnections} conns × ${cfg.batchSize} events) for ${seconds} s, timestamp → arrival`,
    unit: 'events/s',
    service: {
      throughput: delivered.distinct / seconds,
      p50: percentileOfSorted(all, 50),
      p99,
      spread: 0,
      failed: load.non2xx + load.errors + load.timeouts,
      runs: [],
    },
    baselines: [],
    checks: [
      { label: 'ingest during the run', value: Math.round(load.throughput), unit: 'events/s', min: 5000 },
      { label: 'p99 delivery lag (arrival − timestamp)', value: p99, unit: 'ms', max: 2000 },
      { label: 'committed events never delivered', value: missing, unit: '', max: 0 },
    ],
    notes: [
      `${fmt(delivered.distinct)} events delivered of ${fmt(committed)} committed (ingest ${fmt(load.throughput)} events/s, ${fmt(load.requests)} batches); lag p50 ${percentileOfSorted(all, 50)} ms, p99 ${p99} ms, max ${all.at(-1)} ms`,
      `receiver: ${JSON.stringify(route.answers)} answers, ${fmt(delivered.repeated)} events received again (at least once), ${delivered.outOfOrder} out of chain order, ${route.malformed} malformed bodies`,
      `the API afterwards: state ${seen.state}, deliveredEvents ${fmt(seen.deliveredEvents)}, lagSeconds ${seen.lagSeconds}`,
    ],
  };
}

async function ingestWithDestinations(ctx, receiver, api) {
  const { log } = ctx;
  const before = await committedEvents(ctx);
  const receipts = [];
  const ids = [];
  for (let i = 0; i < INGEST_DESTINATIONS; i++) {
    const delivered = new DeliveredEvents();
    const route = receiver.route(`ingest-${i}`, {
      onEvents: (events) => appended(events).forEach((e) => delivered.add(e)),
    });
    ids.push((await api.createWebhook(`bench-streams-${i}`, route.url)).id);
    receipts.push(delivered);
  }
  let paused = false;
  const setPaused = async (want) => {
    if (paused !== want) await Promise.all(ids.map((id) => (want ? api.pause(id) : api.resume(id))));
    paused = want;
  };
  // A resumed destination first delivers what was appended while it was paused: the active run starts once all have.
  const catchUps = [];
  const catchUp = async () => {
    const committed = (await committedEvents(ctx)) - before;
    const started = Date.now();
    const done = await waitFor(() => receipts.every((r) => r.distinct >= committed), 120_000);
    const behind = committed - Math.min(...receipts.map((r) => r.distinct));
    catchUps.push(
      done ? `${((Date.now() - started) / 1000).toFixed(1)} s` : `not within 120 s (${fmt(behind)} behind)`,
    );
  };
  const load = ingestLoad(ctx);
  log(`  streams-ingest: ${INGEST_DESTINATIONS} webhook destinations active, then paused, interleaved`);
  const result = await compareRuns({
    ctx,
    label: 'streams-ingest',
    contenders: [
      {
        key: 'service',
        run: async (seconds) => {
          await setPaused(false);
          await catchUp();
          return load.run(seconds);
        },
      },
      {
        key: 'paused',
        run: async (seconds) => {
          await setPaused(true);
          return load.run(seconds);
        },
      },
    ],
  });
  for (const id of ids) await api.remove(id);
  return {
    id: 'streams-ingest',
    title: `streams: batch ingest (${ctx.cfg.batchConnections} conns × ${ctx.cfg.batchSize} events) with ${INGEST_DESTINATIONS} active webhook destinations`,
    unit: 'events/s',
    service: result.service,
    baselines: [
      {
        key: 'paused',
        title: `the same ingest, the ${INGEST_DESTINATIONS} destinations paused`,
        summary: result.paused,
        target: { minRatio: 0.9 },
      },
    ],
    notes: [
      `before each active run the ${INGEST_DESTINATIONS} resumed destinations caught up with what was appended while paused: ${catchUps.join(', ')} (outside the measured seconds; inside the CPU figures)`,
      `events delivered per destination: ${receipts.map((r) => fmt(r.distinct)).join(', ')}; received again: ${receipts.map((r) => fmt(r.repeated)).join(', ')}`,
    ],
  };
}

async function backlog(ctx, receiver, api) {
  const { cfg, log } = ctx;
  const outage = cfg.streamsOutageSeconds;
  const delivered = new DeliveredEvents();
  let down = true;
  let size = Infinity;
  let firstOk = null;
  let lastAt = null;
  const route = receiver.route('backlog', {
    status: () => (down ? 503 : 200),
    onEvents: (events, at) => {
      let fresh = 0;
      for (const event of appended(events)) if (delivered.add(event)) fresh++;
      if (firstOk === null) firstOk = { at, events: fresh };
      if (lastAt === null && delivered.distinct >= size) lastAt = at;
    },
  });
  const before = await committedEvents(ctx);
  const destination = await api.createWebhook('bench-streams-backlog', route.url);
  log(`  streams-backlog: the receiver answers 503 for ${outage} s of full batch ingest`);
  const load = await ingestLoad(ctx).run(outage);
  size = (await committedEvents(ctx)) - before;
  const failing = await api.get(destination.id);
  const backAt = Date.now();
  down = false;
  const outageAnswers = { ...route.answers };
  log(
    `  streams-backlog: receiver back; backlog ${fmt(size)} events (state ${failing.state}); waiting for the next retry`,
  );
  const deadline = MAX_BACKOFF_MS + 30_000 + (size / 5000) * 1000;
  await waitFor(
    () => size === 0 || lastAt !== null,
    deadline,
    () =>
      log(
        firstOk === null
          ? `  streams-backlog: no retry yet, ${((Date.now() - backAt) / 1000).toFixed(0)} s after the receiver came back`
          : `  streams-backlog: ${fmt(delivered.distinct)} of ${fmt(size)} delivered`,
      ),
  );
  await api.remove(destination.id);
  const seconds = firstOk && lastAt !== null ? (lastAt - firstOk.at) / 1000 : null;
  const rate = seconds > 0 ? (size - firstOk.events) / seconds : null;
  const wait = firstOk ? (firstOk.at - backAt) / 1000 : null;
  const missing = Math.max(0, size - delivered.distinct);
  log(
    `  streams-backlog: ${fmt(delivered.distinct)} of ${fmt(size)} delivered; first 200 ${wait === null ? 'never' : `${wait.toFixed(1)} s`} after the receiver came back; ${fmt(rate)} events/s from there`,
  );
  return {
    id: 'streams-backlog',
    title: `streams: a backlog of ${fmt(size)} events (${outage} s of batch ingest against a receiver answering 503) delivered once it answers 200 again`,
    unit: 'events/s',
    service: {
      throughput: rate,
      p50: null,
      p99: null,
      spread: 0,
      failed: load.non2xx + load.errors + load.timeouts,
      runs: [],
    },
    baselines: [],
    checks: [
      {
        label: 'backlog events/s from the first 200',
        value: rate === null ? null : Math.round(rate),
        unit: 'events/s',
        min: 20_000,
      },
      { label: 'backlog events never delivered', value: missing, unit: '', max: 0 },
    ],
    notes: [
      `backlog ${fmt(size)} events (ingest ${fmt(load.throughput)} events/s during the outage); receiver answers during the outage ${JSON.stringify(outageAnswers)}; then state ${failing.state}, consecutiveFailures ${failing.consecutiveFailures}, lastError status ${failing.lastError ? failing.lastError.status : null}`,
      `wait from the receiver's return to the first 200 (the engine's backoff, up to 5 min): ${wait === null ? 'no 200 within the deadline' : `${wait.toFixed(1)} s`}; rate = (backlog − the ${firstOk ? fmt(firstOk.events) : '—'} events of that first batch) / ${seconds === null ? '—' : seconds.toFixed(2)} s from its arrival to the last backlog event's`,
      `receiver: ${JSON.stringify(route.answers)} answers in all, ${fmt(delivered.repeated)} events received again, ${delivered.outOfOrder} out of chain order, ${route.malformed} malformed bodies`,
    ],
  };
}

module.exports = { streamsScenario };
