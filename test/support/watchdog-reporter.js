/**
 * A jest reporter beside the default one, for runs nobody watches (CI, the e2e container): it says
 * which suite starts and when (the default reporter names a suite only once it ends, so a hung run
 * showed nothing of where it hung), fails a suite that runs longer than SUITE_LIMIT_MS, and ends the
 * process once the run is over if something it left open (a child process, a socket, a pool) would
 * keep it alive: a CI run once waited an hour on such a leftover. Either way it names what was open.
 *
 * Timers are unref'd: they never keep the process alive themselves, and fire only while something
 * else does. (A suite that blocks the event loop outright is stopped by the `timeout` around the run:
 * docker/e2e-in-container.sh, .ci/run.)
 */
const SUITE_LIMIT_MS = Number(process.env.E2E_SUITE_LIMIT_SECONDS ?? 900) * 1000;
const EXIT_GRACE_MS = 10_000;

class WatchdogReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.started = Date.now();
    /** Each running suite's limit, by its path: with several workers, suites run side by side. */
    this.suiteTimers = new Map();
  }

  onTestStart(test) {
    const name = test.path.startsWith(this.rootDir) ? test.path.slice(this.rootDir.length + 1) : test.path;
    process.stderr.write(`[${this.elapsed()}] start ${name}\n`);
    clearTimeout(this.suiteTimers.get(test.path));
    const timer = setTimeout(() => {
      process.stderr.write(
        `[${this.elapsed()}] ${name} has run for ${SUITE_LIMIT_MS / 1000} s: stopping the run. Open: ${openHandles()}\n`,
      );
      endChildren();
      process.exit(1);
    }, SUITE_LIMIT_MS).unref();
    this.suiteTimers.set(test.path, timer);
  }

  onTestResult(test) {
    clearTimeout(this.suiteTimers.get(test.path));
    this.suiteTimers.delete(test.path);
  }

  onRunComplete(_contexts, results) {
    for (const timer of this.suiteTimers.values()) clearTimeout(timer);
    this.suiteTimers.clear();
    const code =
      results.numFailedTests > 0 || results.numFailedTestSuites > 0 || results.numRuntimeErrorTestSuites > 0 ? 1 : 0;
    setTimeout(() => {
      process.stderr.write(
        `[${this.elapsed()}] the run ended ${EXIT_GRACE_MS / 1000} s ago and something still holds the process: ${openHandles()}; killing the child processes and exiting ${code}\n`,
      );
      endChildren();
      process.exit(code);
    }, EXIT_GRACE_MS).unref();
  }

  elapsed() {
    return `${Math.round((Date.now() - this.started) / 1000)} s`;
  }
}

/** The child processes still running are killed: none outlives the run. */
function endChildren() {
  for (const handle of process._getActiveHandles?.() ?? [])
    if (handle?.constructor?.name === 'ChildProcess') handle.kill('SIGKILL');
}

/** What keeps the event loop alive, by kind (child processes with their command line). */
function openHandles() {
  const handles = process._getActiveHandles?.() ?? [];
  const described = handles.map((handle) => {
    const kind = handle?.constructor?.name ?? typeof handle;
    if (kind === 'ChildProcess') return `ChildProcess ${handle.pid} (${(handle.spawnargs ?? []).slice(-1)[0] ?? ''})`;
    if (kind === 'Socket' && handle.remotePort) return `Socket to ${handle.remoteAddress}:${handle.remotePort}`;
    return kind;
  });
  return described.length === 0 ? 'nothing' : described.join(', ');
}

module.exports = WatchdogReporter;
