'use strict';

/**
 * Preloaded into the service with `node -r` when BENCH_PROFILE is set. The bench starts and
 * stops the V8 CPU profiler by creating $BENCH_PROFILE_FILE.start and .stop (not by a signal:
 * Nest's shutdown hooks treat SIGUSR2 and friends as "shut down"); on stop the profile is written
 * to $BENCH_PROFILE_FILE (open it in Chrome DevTools, or `node bench/profile-summary.js <file>`).
 */
const fs = require('node:fs');
const inspector = require('node:inspector');

const file = process.env.BENCH_PROFILE_FILE;
const session = new inspector.Session();
session.connect();

function take(flag) {
  try {
    fs.unlinkSync(`${file}.${flag}`);
    return true;
  } catch {
    return false;
  }
}

setInterval(() => {
  if (take('start')) {
    session.post('Profiler.enable', () =>
      session.post('Profiler.setSamplingInterval', { interval: 200 }, () => session.post('Profiler.start')),
    );
  } else if (take('stop')) {
    session.post('Profiler.stop', (error, result) => {
      if (!error) fs.writeFileSync(file, JSON.stringify(result.profile));
    });
  }
}, 100).unref();
