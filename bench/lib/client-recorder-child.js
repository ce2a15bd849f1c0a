'use strict';

/*
 * The recording application of the `client` scenario's outage run (bench/scenarios/client.js), in a
 * process of its own so that its RSS is its own: a durable recorder (`whenFull: 'spill'`) offered
 * `rate` events per second for `seconds`, then flushed. Settings come as JSON in argv[2]. Prints
 * JSON lines: `{"ready":true}`, `{"recorded":n}` each second, and at the end
 * `{"done":true,"recorded":n,"refused":n,"firstRefusal":…,"counters":{…},"flushMs":n}`.
 */
const { AuditTrailClient } = require('../../libs/client/dist/index.cjs');

async function main() {
  const s = JSON.parse(process.argv[2]);
  const client = new AuditTrailClient({ baseUrl: s.baseUrl, apiKey: s.apiKey });
  const recorder = client.recorder({
    spoolDir: s.spoolDir,
    whenFull: 'spill',
    maxQueueBytes: s.maxQueueBytes,
    maxSpoolBytes: s.maxSpoolBytes,
    lingerMs: 50,
    // The most a batch may hold: after the outage the backlog goes out in as few requests as it can.
    maxBatchEvents: 1000,
    backoff: { baseMs: 100, capMs: 2000 },
  });
  await recorder.ready();
  const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
  say({ ready: true });
  let offered = 0;
  let recorded = 0;
  let refused = 0;
  let firstRefusal = null;
  const started = performance.now();
  const deadline = started + s.seconds * 1000;
  const progress = setInterval(() => say({ recorded }), 1000);
  // Every 10 ms, as many events as the rate asks by now (catching up after a slow tick), each awaited.
  while (performance.now() < deadline) {
    const due = Math.floor(((performance.now() - started) / 1000) * s.rate) - offered;
    const tick = [];
    for (let i = 0; i < due; i++) {
      const n = offered++;
      tick.push(
        recorder
          .record({
            actor: `user_${n % 1000}`,
            action: 'client.outage',
            resource: `doc:${n % 5000}`,
            context: { run: s.run, n },
            chain: `outage-${n % 8}`,
          })
          .then(
            () => recorded++,
            (error) => {
              refused++;
              firstRefusal ??= String(error && error.message);
            },
          ),
      );
    }
    await Promise.all(tick);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  clearInterval(progress);
  const flushStarted = performance.now();
  await recorder.flush();
  const flushMs = performance.now() - flushStarted;
  await recorder.close();
  say({ done: true, offered, recorded, refused, firstRefusal, counters: recorder.counters, flushMs });
}

main().catch((error) => {
  process.stderr.write(`${error && error.stack}\n`);
  process.exit(1);
});
