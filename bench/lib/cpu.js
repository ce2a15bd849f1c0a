'use strict';

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');

function clockTicks() {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
}

/** utime + stime of a process in clock ticks, and its command name; null when it is gone. */
function processTicks(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    // fields[0] is field 3 (state): utime is field 14, stime field 15.
    return { comm, ticks: Number(fields[11]) + Number(fields[12]) };
  } catch {
    return null;
  }
}

/** Busy and total clock ticks of the whole machine, from /proc/stat. */
function machineTicks() {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const [user, nice, system, idle, iowait, irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
  return {
    busy: user + nice + system + irq + softirq + steal,
    total: user + nice + system + idle + iowait + irq + softirq + steal,
  };
}

function postgresTicks() {
  const out = new Map();
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const p = processTicks(name);
    if (p && p.comm === 'postgres') out.set(name, p.ticks);
  }
  return out;
}

/**
 * Where the CPU went during a run, in cores (CPU seconds per wall-clock second): the tracked
 * processes by label (`service`, `bareHttp`), every PostgreSQL process, this bench process (the
 * load generator or the baseline's client), and everything else on the machine. On a 2-core
 * machine they add up to at most 2. Processes tracked under one label add up: the ingest
 * scenarios' second service (without the Merkle tree) counts as `service` too, so a run's
 * `service` figure is whichever of the two it loaded (the other one idles).
 */
class CpuMeter {
  constructor() {
    this.hz = clockTicks();
    /** key → { pid, label } */
    this.pids = new Map();
  }

  /** Tracks `pid` under `key` (a later call with the same key replaces it: a restarted service). */
  track(key, pid, label = key) {
    this.pids.set(key, { pid, label });
  }

  untrack(key) {
    this.pids.delete(key);
  }

  snapshot() {
    const tracked = {};
    for (const [key, { pid, label }] of this.pids) tracked[key] = { label, ...processTicks(pid) };
    return {
      at: performance.now(),
      machine: machineTicks(),
      postgres: postgresTicks(),
      tracked,
      bench: process.cpuUsage(),
    };
  }

  between(a, b) {
    const seconds = (b.at - a.at) / 1000;
    const cores = (ticks) => Number((ticks / this.hz / seconds).toFixed(2));
    let pg = 0;
    for (const [pid, ticks] of b.postgres) pg += ticks - (a.postgres.get(pid) || 0);
    const out = { postgres: cores(pg) };
    let known = pg;
    const byLabel = {};
    for (const [key, after] of Object.entries(b.tracked)) {
      const before = a.tracked[key];
      const ticks = after.ticks !== undefined && before && before.ticks !== undefined ? after.ticks - before.ticks : 0;
      byLabel[after.label] = (byLabel[after.label] || 0) + ticks;
      known += ticks;
    }
    for (const [label, ticks] of Object.entries(byLabel)) out[label] = cores(ticks);
    const benchMicros = b.bench.user + b.bench.system - (a.bench.user + a.bench.system);
    out.bench = Number((benchMicros / 1e6 / seconds).toFixed(2));
    known += (benchMicros / 1e6) * this.hz;
    const busy = b.machine.busy - a.machine.busy;
    out.other = Math.max(0, cores(busy - known));
    out.idle = cores(b.machine.total - a.machine.total - busy);
    return out;
  }
}

module.exports = { CpuMeter };
