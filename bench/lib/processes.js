'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');

/** Every child process the run started, so that cleanup can stop them whatever happens. */
const children = new Set();

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Starts `node <script>` with `env`, its output appended to `logFile`. */
function startNode(script, { env, logFile, args = [], nodeArgs = [] }) {
  const out = fs.openSync(logFile, 'a');
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], { env, stdio: ['ignore', out, out] });
  fs.closeSync(out);
  children.add(child);
  child.exitInfo = null;
  child.exited = new Promise((resolve) => {
    child.once('exit', (code, signal) => {
      child.exitInfo = { code, signal };
      children.delete(child);
      resolve(child.exitInfo);
    });
  });
  return child;
}

/** Polls `url` until it answers 200; fails early if the process dies. */
async function waitUntilReady(child, url, { timeoutMs = 60_000, logFile } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitInfo) {
      throw new Error(`process exited (${JSON.stringify(child.exitInfo)}) before ${url} answered${tail(logFile)}`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2000) });
      await response.arrayBuffer();
      if (response.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url} did not answer 200 within ${timeoutMs} ms${tail(logFile)}`);
    await sleep(200);
  }
}

function tail(logFile) {
  if (!logFile || !fs.existsSync(logFile)) return '';
  const text = fs.readFileSync(logFile, 'utf8').trimEnd().split('\n').slice(-15).join('\n');
  return `\n--- last lines of ${logFile} ---\n${text}`;
}

async function stopChild(child, timeoutMs = 10_000) {
  if (!child || child.exitInfo) return;
  child.kill('SIGTERM');
  const timer = sleep(timeoutMs).then(() => 'timeout');
  if ((await Promise.race([child.exited, timer])) === 'timeout') {
    child.kill('SIGKILL');
    await child.exited;
  }
}

async function stopAllChildren() {
  await Promise.all([...children].map((child) => stopChild(child)));
}

/** Last resort on process exit: nothing asynchronous can run any more. */
function killAllChildrenNow() {
  for (const child of children) {
    try {
      child.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** VmRSS of a process in bytes, or null when it is gone. */
function readRss(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmRSS:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/**
 * Samples a process's resident set size from /proc every `intervalMs` and keeps the peak, for
 * the whole run and for any number of open windows (one per scenario or per request).
 */
class RssSampler {
  constructor(pid, intervalMs = 10) {
    this.pid = pid;
    this.peak = readRss(pid) ?? 0;
    this.windows = new Set();
    this.timer = setInterval(() => this.sample(), intervalMs);
    this.timer.unref();
  }

  sample() {
    const rss = readRss(this.pid);
    if (rss === null) return null;
    if (rss > this.peak) this.peak = rss;
    for (const w of this.windows) if (rss > w.peak) w.peak = rss;
    return rss;
  }

  /** Follows another process (the restarted service); the run's peak is kept. */
  retarget(pid) {
    this.pid = pid;
    this.sample();
  }

  /** Opens a window starting now; close() returns { start, peak, growth } in bytes. */
  open() {
    const start = this.sample() ?? 0;
    const window = { start, peak: start };
    this.windows.add(window);
    return {
      close: () => {
        this.sample();
        this.windows.delete(window);
        return { start: window.start, peak: window.peak, growth: Math.max(0, window.peak - window.start) };
      },
    };
  }

  stop() {
    clearInterval(this.timer);
  }
}

module.exports = {
  freePort,
  startNode,
  waitUntilReady,
  stopChild,
  stopAllChildren,
  killAllChildrenNow,
  RssSampler,
  readRss,
  sleep,
  tail,
};
