'use strict';

const { execFileSync, spawn } = require('node:child_process');
const { randomUUID } = require('node:crypto');
const fs = require('node:fs');
const net = require('node:net');
const path = require('node:path');
const { ulidToUuid } = require('../lib/ids');
const { loopLoad } = require('../lib/load');
const { freePort, readRss, RssSampler } = require('../lib/processes');
const { compareRuns, eventBody } = require('./common');

/** Issue 38's knobs (bench/README.md); the defaults are the issue's sizes. */
const knob = (name, fallback) => {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name}: not a number ≥ 0: ${value}`);
  return n;
};

/**
 * Issue 38's targets for @audit-trail/client (libs/client), each against a baseline of the same run:
 *
 * 1. `client-recorder`: events/s acknowledged through a recorder (in memory; one batch of
 *    BENCH_CLIENT_BATCH in flight, the recorder's own way) against the same events sent as raw
 *    POST /v1/events/batch of the same size back to back on one connection. Target ≥ 0.9×. The
 *    same raw batches each with an Idempotency-Key (what the service's replay store costs, which
 *    the recorder pays for exactly-once) and the durable recorder (spool, fsync per batch) are
 *    measured beside it, reported.
 * 2. `client-outage`: a recording application (a child process, bench/lib/client-recorder-child.js)
 *    offered BENCH_CLIENT_RATE events/s in `spill` mode while the service is unreachable for
 *    BENCH_CLIENT_OUTAGE_SECONDS (a TCP proxy in front of it refuses and cuts connections): nothing
 *    lost, nothing stored twice (counted in SQL), and the child's RSS grows by at most the configured
 *    queue (BENCH_CLIENT_QUEUE_MB) + 50 MB.
 * 3. `client-verify`: receipts/s of verifyReceipt with the chain's checkpoint cached (16 at once), and
 *    of verifyReceipts over the receipts of one chain (its root rebuilt from the listed events).
 *    Target ≥ 2,000/s each.
 */
async function clientScenario(ctx) {
  const { cfg, log } = ctx;
  const root = cfg.root;
  // The client as it is published: dist/index.cjs, built from libs/client (esbuild, a few seconds).
  execFileSync(process.execPath, [path.join(root, 'libs', 'client', 'build.mjs')], { cwd: root, stdio: 'ignore' });
  const { AuditTrailClient, receiptOf } = require(path.join(root, 'libs', 'client', 'dist', 'index.cjs'));
  const apiKey = ctx.keys.ingest;
  const client = new AuditTrailClient({ baseUrl: ctx.serviceUrl, apiKey });
  const run = `r${Date.now().toString(36)}`;
  const rows = [];
  rows.push(...(await throughputRows(ctx, client, run)));
  rows.push(await outageRow(ctx, apiKey, run));
  rows.push(...(await verifyRows(ctx, client, receiptOf, run)));
  log(`  client · done`);
  return rows;
}

async function throughputRows(ctx, client, run) {
  const { cfg } = ctx;
  const size = knob('BENCH_CLIENT_BATCH', 500);
  const tmp = fs.mkdtempSync(path.join(ctx.tmpDir, 'client-spool-'));
  let k = 0;
  const next = (label) => {
    const n = k++;
    return { ...eventBody(n, `client-${label}-${n % 8}`), action: 'client.throughput', context: { run, n } };
  };
  const rawRun = (key, keyed) => ({
    key,
    run: async (seconds) => {
      const result = await loopLoad({
        loops: 1,
        seconds,
        op: async () => {
          const body = JSON.stringify({ events: Array.from({ length: size }, () => next(key)) });
          const headers = keyed ? { ...ctx.headers, 'idempotency-key': `bench_${randomUUID()}` } : ctx.headers;
          const res = await fetch(`${ctx.serviceUrl}/v1/events/batch`, { method: 'POST', headers, body });
          await res.arrayBuffer();
          if (res.status !== 201) throw new Error(`HTTP ${res.status}`);
        },
      });
      return { ...result, throughput: result.throughput * size, ok: result.ok * size };
    },
  });
  const recorderRun = (key, options) => ({
    key,
    run: async (seconds) => {
      // A queue of a few batches: the producers wait for room rather than pile up what close() drains.
      const chosen = options();
      const recorder = client.recorder({
        maxBatchEvents: size,
        lingerMs: 5,
        maxQueueBytes: 2 * 1024 * 1024,
        ...chosen,
      });
      await recorder.ready();
      const started = performance.now();
      const deadline = started + seconds * 1000;
      let sentAtDeadline = null;
      const timer = setTimeout(() => (sentAtDeadline = recorder.counters.sent), seconds * 1000);
      // Four producers handing events over as fast as record() takes them (`block` in memory:
      // record() waits while the queue is full; the spool: group-committed fsyncs).
      await Promise.all(
        Array.from({ length: 4 }, async () => {
          while (performance.now() < deadline) {
            await Promise.all(Array.from({ length: 50 }, () => recorder.record(next(key))));
            // record() in memory resolves at once while there is room: let the sender's I/O run.
            await new Promise((resolve) => setImmediate(resolve));
          }
        }),
      );
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - performance.now())));
      clearTimeout(timer);
      const sent = sentAtDeadline ?? recorder.counters.sent;
      const { unsent } = await recorder.close({ timeoutMs: 60_000 });
      // In memory, what close() could not send in its time is lost; with a spool it stays there (a
      // restart sends it), so only refusals count: the spool outgrows the sender by design.
      const errors = recorder.counters.rejected + (chosen.spoolDir ? 0 : unsent);
      return { throughput: sent / seconds, p50: null, p99: null, ok: sent, errors, seconds };
    },
  });
  let spools = 0;
  const result = await compareRuns({
    ctx,
    label: 'client throughput',
    contenders: [
      recorderRun('recorder', () => ({})),
      rawRun('raw', false),
      rawRun('keyed', true),
      recorderRun('durable', () => ({ spoolDir: path.join(tmp, String(spools++)) })),
    ],
  });
  fs.rmSync(tmp, { recursive: true, force: true });
  const rawBaseline = {
    key: 'raw',
    title: `raw POST /v1/events/batch of ${size}, one at a time`,
    summary: result.raw,
  };
  return [
    {
      id: 'client-recorder',
      title: `recorder (in memory), batches of ${size}, 4 producers`,
      unit: 'events/s',
      service: result.recorder,
      baselines: [
        { ...rawBaseline, target: { minRatio: 0.9 } },
        {
          key: 'keyed',
          title: `the same with an Idempotency-Key each (as the recorder sends)`,
          summary: result.keyed,
        },
      ],
    },
    {
      id: 'client-recorder-durable',
      title: `recorder (spool, fsync per batch), batches of ${size}, 4 producers`,
      unit: 'events/s',
      service: result.durable,
      baselines: [rawBaseline],
    },
  ];
}

/** A TCP proxy to the service that can refuse and cut every connection, as a service that is down. */
async function outageProxy(target) {
  const { port: targetPort, hostname } = new URL(target);
  const port = await freePort();
  const sockets = new Set();
  const server = net.createServer((socket) => {
    const upstream = net.connect(Number(targetPort), hostname);
    sockets.add(socket).add(upstream);
    const end = () => {
      socket.destroy();
      upstream.destroy();
      sockets.delete(socket);
      sockets.delete(upstream);
    };
    socket.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    socket.pipe(upstream).pipe(socket);
  });
  const listen = () => new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  await listen();
  return {
    url: `http://127.0.0.1:${port}`,
    down: async () => {
      const closed = new Promise((resolve) => server.close(resolve));
      sockets.forEach((s) => s.destroy());
      await closed;
    },
    up: listen,
    close: async () => {
      sockets.forEach((s) => s.destroy());
      if (server.listening) await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function outageRow(ctx, apiKey, run) {
  const { log } = ctx;
  const rate = knob('BENCH_CLIENT_RATE', 5000);
  const outageSeconds = knob('BENCH_CLIENT_OUTAGE_SECONDS', 60);
  const before = knob('BENCH_CLIENT_WARM_SECONDS', 5);
  const after = knob('BENCH_CLIENT_AFTER_SECONDS', 5);
  const queueMb = knob('BENCH_CLIENT_QUEUE_MB', 32);
  const proxy = await outageProxy(ctx.serviceUrl);
  const spoolDir = fs.mkdtempSync(path.join(ctx.tmpDir, 'client-outage-'));
  const settings = {
    baseUrl: proxy.url,
    apiKey,
    spoolDir,
    rate,
    seconds: before + outageSeconds + after,
    maxQueueBytes: queueMb * 1024 * 1024,
    maxSpoolBytes: 1024 * 1024 * 1024,
    run,
  };
  const child = spawn(
    process.execPath,
    [path.join(__dirname, '..', 'lib', 'client-recorder-child.js'), JSON.stringify(settings)],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const lines = [];
  let waiter = null;
  let buffered = '';
  child.stdout.on('data', (chunk) => {
    buffered += chunk;
    const parts = buffered.split('\n');
    buffered = parts.pop();
    for (const part of parts) {
      lines.push(JSON.parse(part));
      waiter?.();
    }
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const lineWith = async (field) => {
    for (;;) {
      const line = lines.find((l) => l[field] !== undefined);
      if (line) return line;
      const woken = new Promise((resolve) => (waiter = resolve));
      const code = await Promise.race([woken, exited.then((c) => ({ exit: c }))]);
      if (code && code.exit !== undefined && !lines.some((l) => l[field] !== undefined))
        throw new Error(`the recording child exited (${code.exit}) before ${field}: ${stderr.slice(-1000)}`);
    }
  };
  const sampler = new RssSampler(child.pid, 10);
  let result;
  try {
    await lineWith('ready');
    await new Promise((resolve) => setTimeout(resolve, before * 1000));
    // The RSS of a recorder at work, then its peak from the outage until it has caught up.
    const window = sampler.open();
    log(
      `  client · outage: the service unreachable for ${outageSeconds} s, ${rate} events/s offered (RSS ${mb(readRss(child.pid) ?? 0)})`,
    );
    await proxy.down();
    await new Promise((resolve) => setTimeout(resolve, outageSeconds * 1000));
    await proxy.up();
    log(`  client · outage: the service reachable again`);
    const done = await lineWith('done');
    const memory = window.close();
    result = { done, memory };
  } finally {
    sampler.stop();
    if (child.exitCode === null) child.kill('SIGKILL');
    await exited;
    await proxy.close();
    fs.rmSync(spoolDir, { recursive: true, force: true });
  }
  const { done, memory } = result;
  const { rows } = await ctx.db.query(
    `SELECT count(*)::int AS stored, count(DISTINCT context->>'n')::int AS distinct
       FROM events WHERE account_id = $1 AND action = 'client.outage' AND context->>'run' = $2`,
    [ulidToUuid(ctx.accounts.ingest), run],
  );
  const { stored, distinct } = rows[0];
  const lost = done.recorded - distinct;
  const twice = stored - distinct;
  const growthMb = memory.growth / 1024 / 1024;
  log(
    `  client · outage: ${done.recorded} recorded (${done.refused} refused), ${stored} stored, ${distinct} distinct; flush after the outage ${Math.round(done.flushMs)} ms; RSS ${mb(memory.start)} → peak ${mb(memory.peak)}`,
  );
  return {
    id: 'client-outage',
    title: `recorder (spill), service down ${outageSeconds} s, ${rate} events/s offered`,
    unit: 'events/s',
    service: {
      throughput: done.recorded / settings.seconds,
      p50: null,
      p99: null,
      spread: null,
      failed: done.refused,
    },
    baselines: [],
    checks: [
      { label: 'events lost', value: Math.max(0, lost) + done.refused, unit: 'events', max: 0 },
      { label: 'events stored twice', value: twice, unit: 'events', max: 0 },
      { label: 'RSS growth', value: growthMb, unit: 'MB', max: queueMb + 50 },
    ],
    notes: [
      `${done.offered} offered, ${done.recorded} recorded, ${done.refused} refused${done.firstRefusal ? ` (${done.firstRefusal})` : ''}; ${stored} stored (${distinct} distinct); counters ${JSON.stringify(done.counters)}`,
      `the recording process's RSS: ${mb(memory.start)} before the outage, peak ${mb(memory.peak)} until caught up (queue ${queueMb} MB); caught up ${(done.flushMs / 1000).toFixed(1)} s after the offering ended`,
    ],
  };
}

async function verifyRows(ctx, client, receiptOf, run) {
  const count = knob('BENCH_CLIENT_VERIFY_EVENTS', 10_000);
  const key = await client.transparency.checkpointKey();
  const receipts = [];
  for (let n = 0; n < count; n += 1000) {
    const events = Array.from({ length: Math.min(1000, count - n) }, (_, i) => ({
      ...eventBody(n + i, `client-verify-${run}`),
      action: 'client.verify',
    }));
    receipts.push(...(await client.events.appendBatch(events)).map(receiptOf));
  }
  const options = { key, checkpointMaxAgeMs: 3_600_000 };
  await client.verifyReceipt(receipts[0], options); // the checkpoint, fetched and verified once, cached
  let next = 0;
  const one = {
    key: 'one',
    run: (seconds) =>
      loopLoad({
        loops: 16,
        seconds,
        op: async () => {
          await client.verifyReceipt(receipts[next++ % receipts.length], options);
        },
      }),
  };
  const many = {
    key: 'many',
    run: async (seconds) => {
      const result = await loopLoad({
        loops: 1,
        seconds,
        op: async () => {
          const verdicts = await client.verifyReceipts(receipts, options);
          const failed = verdicts.find((v) => !v.ok);
          if (failed) throw new Error(`${failed.receipt.id}: ${failed.error.message}`);
        },
      });
      return { ...result, throughput: result.throughput * receipts.length, p50: result.p50, p99: result.p99 };
    },
  };
  const result = await compareRuns({ ctx, label: 'client verify', contenders: [one, many] });
  return [
    {
      id: 'client-verify',
      title: `verifyReceipt, checkpoint cached, 16 at once (chain of ${count})`,
      unit: 'receipts/s',
      service: result.one,
      baselines: [],
      checks: [{ label: 'receipts/s', value: result.one.throughput, unit: 'receipts/s', min: 2000 }],
    },
    {
      id: 'client-verify-batch',
      title: `verifyReceipts of the ${count} receipts of one chain (root rebuilt from pages of 200)`,
      unit: 'receipts/s',
      service: result.many,
      baselines: [],
      checks: [{ label: 'receipts/s', value: result.many.throughput, unit: 'receipts/s', min: 2000 }],
      notes: ['p50/p99 of this row: one verifyReceipts call over every receipt of the chain'],
    },
  ];
}

const mb = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

module.exports = { clientScenario };
