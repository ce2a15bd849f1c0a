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
 * Where the CPU went during a run, in cores (CPU seconds per wall-clock second): the service
 * process, every PostgreSQL process, this bench process (the load generator or the baseline's
 * client), and everything else on the machine. On a 2-core machine the four add up to at most 2.
 */
class CpuMeter {
  constructor() {
    this.hz = clockTicks();
    this.pids = new Map();
  }

  track(name, pid) {
    this.pids.set(name, pid);
  }

  snapshot() {
    const tracked = {};
    for (const [name, pid] of this.pids) tracked[name] = processTicks(pid);
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
    for (const name of Object.keys(b.tracked)) {
      const before = a.tracked[name];
      const after = b.tracked[name];
      const ticks = after && before ? after.ticks - before.ticks : 0;
      out[name] = cores(ticks);
      known += ticks;
    }
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
