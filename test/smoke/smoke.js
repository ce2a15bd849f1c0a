#!/usr/bin/env node
/**
 * Smoke test of the built service. First on the embedded default, exactly as a newcomer runs it:
 * no DATABASE_URL, no API_KEYS; it reads the development key from the start-up log. Then, when a
 * PostgreSQL server is reachable (E2E_POSTGRES_URL, DATABASE_URL or the local one), on a fresh
 * database of it with an API_KEYS key, where whole-chain verification runs on the built worker
 * threads. Each run appends, reads, lists and verifies events over real HTTP and stops the
 * service cleanly.
 */
'use strict';
const { spawn } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const { lstatSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync } = require('node:fs');
const { createServer } = require('node:net');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { Client } = require('pg');

const ADMIN_URL =
  process.env.E2E_POSTGRES_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

const results = [];
const check = (name, ok, detail = '') => {
  results.push(ok);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${name}${ok || !detail ? '' : `: ${detail}`}`);
};

function freePort() {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function main() {
  await smoke('embedded', {});
  await unreachableDatabase();
  const database = `audit_smoke_${randomBytes(4).toString('hex')}`;
  if (await admin((c) => c.query(`CREATE DATABASE "${database}"`))) {
    const url = new URL(ADMIN_URL);
    url.pathname = `/${database}`;
    const key = `smoke-${randomBytes(16).toString('hex')}`;
    try {
      await smoke('postgres', { DATABASE_URL: url.toString(), API_KEYS: `smoke:${key}`, VERIFY_WORKERS: '2' }, key);
    } finally {
      await admin((c) => c.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`));
    }
  } else {
    console.log('skip postgres: no PostgreSQL server reachable');
  }
  const failed = results.filter((ok) => !ok).length;
  console.log(`smoke: ${results.length - failed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

/** Runs `work` on a connection to the admin database; false when the server is not reachable. */
async function admin(work) {
  const client = new Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
  } catch {
    return false;
  }
  try {
    await work(client);
    return true;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** One run of the built service with `settings`; without a `givenKey`, the development key of its log. */
async function smoke(label, settings, givenKey) {
  console.log(`# ${label}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'audit-smoke-'));
  const port = await freePort();
  const metricsPort = await freePort();
  const env = {
    ...process.env,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    VERIFY_PAGE_SIZE: '2',
    METRICS_PORT: String(metricsPort),
  };
  delete env.DATABASE_URL;
  delete env.API_KEYS;
  Object.assign(env, settings);
  const child = spawn(process.execPath, ['dist/apps/api/apps/api/src/main.js'], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  /** What the service said: the `msg` of each JSON line of stdout, and stderr as is. */
  const logged = () =>
    stdout
      .split('\n')
      .map((line) => {
        try {
          return JSON.parse(line).msg;
        } catch {
          return line;
        }
      })
      .join('\n') + stderr;
  const base = `http://127.0.0.1:${port}`;
  try {
    const key =
      givenKey ??
      (await waitFor(() => /Development key: +(\S+)/.exec(logged().replace(/\x1b\[[0-9;]*m/g, ''))?.[1], 60000));
    if (!givenKey) check('prints a development key', Boolean(key), logged().slice(-2000));
    await waitFor(async () => (await fetch(`${base}/health/ready`).catch(() => null))?.ok, 30000);
    const auth = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const appended = [];
    for (const i of [1, 2, 3]) {
      const res = await fetch(`${base}/v1/events`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ actor: 'smoke', action: 'smoke.test', context: { i }, chain: 'smoke' }),
      });
      const body = await res.json();
      appended.push(body.data);
      check(
        `POST /v1/events #${i} → 201 at position ${i}`,
        res.status === 201 && body.data?.chain?.position === i,
        JSON.stringify(body),
      );
    }
    check(
      'events are linked',
      appended[1]?.previousHash === appended[0]?.hash && appended[2]?.previousHash === appended[1]?.hash,
    );
    const one = await fetch(`${base}/v1/events/${appended[2]?.id}`, { headers: auth });
    check(
      'GET /v1/events/:id returns the stored event',
      one.status === 200 && (await one.json()).data?.hash === appended[2]?.hash,
    );
    const list = await fetch(`${base}/v1/events?limit=2`, { headers: auth });
    const page = await list.json();
    check(
      'GET /v1/events pages newest first',
      list.status === 200 && page.data?.[0]?.id === appended[2]?.id && typeof page.nextCursor === 'string',
    );
    const verify = await fetch(`${base}/v1/events/${appended[1]?.id}/verify`, { headers: auth });
    if (verify.status !== 404)
      check(
        'GET /v1/events/:id/verify says valid',
        verify.status === 200 && (await verify.json()).data?.valid === true,
      );
    const chainId = appended[0]?.chain?.id;
    const whole = await fetch(`${base}/v1/chain/${chainId}/verify`, { headers: auth });
    const audit = (await whole.json()).data;
    check(
      'GET /v1/chain/:id/verify walks the chain in windows and says valid',
      whole.status === 200 && audit?.valid === true && audit?.checkedEvents === 3,
      JSON.stringify(audit),
    );
    const where = settings.VERIFY_WORKERS ? `on ${settings.VERIFY_WORKERS} worker thread(s)` : 'in-process';
    check(`whole-chain verification hashes ${where}`, logged().includes(`hashes ${where}`), logged().slice(-2000));
    if (!givenKey) {
      // A newcomer sees every console page: Keys with the development key, Accounts with the operator key.
      const me = await (await fetch(`${base}/v1/me`, { headers: auth })).json();
      const keys = await fetch(`${base}/v1/accounts/${me.data?.accountId}/keys`, { headers: auth });
      check('the development key administers its account (Keys)', keys.status === 200, JSON.stringify(me));
      const operatorKey = /Development operator key: +(\S+)/.exec(logged().replace(/\x1b\[[0-9;]*m/g, ''))?.[1];
      const accounts = await fetch(`${base}/v1/accounts`, { headers: { authorization: `Bearer ${operatorKey}` } });
      check('prints a development operator key that lists accounts', accounts.status === 200, String(accounts.status));
    }
    const denied = await fetch(`${base}/v1/events`);
    check('no key → 401', denied.status === 401);
    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    const exposition = await metrics.text();
    check(
      'GET /metrics on METRICS_PORT counts the appends',
      metrics.status === 200 && /^audit_events_appended_total 3$/m.test(exposition),
      exposition.slice(0, 500),
    );
    const notJson = stdout.split('\n').filter((line) => line !== '' && !isJsonObject(line));
    check('every line on stdout is a JSON object', notJson.length === 0, notJson.slice(0, 3).join('\n'));
    const console = await fetch(`${base}/console/events`);
    check(
      'GET /console/… serves the built console without a key, under its CSP',
      console.status === 200 &&
        (await console.text()).includes('/console/app.js') &&
        (console.headers.get('content-security-policy') ?? '').includes("default-src 'self'"),
      String(console.status),
    );
    if (!settings.DATABASE_URL) {
      const ports = listeningTcpPorts(child.pid).sort((a, b) => a - b);
      const expected = [port, metricsPort].sort((a, b) => a - b).join();
      check(
        'the embedded database listens on no TCP port (only HTTP and metrics)',
        ports.join() === expected,
        ports.join(),
      );
      const open = openToOthers(dataDir);
      check('nothing in DATA_DIR is open to other users', open.length === 0, open.slice(0, 5).join(', '));
    }
  } catch (error) {
    check('smoke run', false, `${error instanceof Error ? error.message : error}\n${logged().slice(-3000)}`);
  } finally {
    child.kill('SIGTERM');
    const code = await new Promise((resolve) => child.on('exit', (c, s) => resolve(c ?? s)));
    check('stops cleanly on SIGTERM (exit 0, contract §11)', code === 0, String(code));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * A start whose PostgreSQL does not answer writes each failed attempt when it happens, with its
 * own time (Nest's bufferLogs held them back until the start gave up, ~27 s later, all with that
 * one time).
 */
async function unreachableDatabase() {
  const closedPort = await freePort();
  const child = spawn(process.execPath, ['dist/apps/api/apps/api/src/main.js'], {
    env: {
      ...process.env,
      DATABASE_URL: `postgres://postgres@127.0.0.1:${closedPort}/none`,
      PORT: String(await freePort()),
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  child.stdout.on('data', (d) => (stdout += d));
  const retries = () =>
    stdout
      .split('\n')
      .filter(isJsonObject)
      .map((line) => JSON.parse(line))
      .filter((entry) => entry.msg.startsWith('Unable to connect to the database'));
  try {
    const [first, second] = await waitFor(() => retries().length >= 2 && retries(), 20_000);
    const apart = Date.parse(second.time) - Date.parse(first.time);
    check('an unreachable database: each retry is logged when it happens', apart >= 1000, `${apart} ms apart`);
  } catch (error) {
    check(
      'an unreachable database: each retry is logged when it happens',
      false,
      `${error.message}\n${stdout.slice(-1000)}`,
    );
  } finally {
    child.kill('SIGKILL');
  }
}

function isJsonObject(line) {
  try {
    const value = JSON.parse(line);
    return typeof value === 'object' && value !== null && typeof value.msg === 'string';
  } catch {
    return false;
  }
}

/** Ports of the TCP sockets process `pid` listens on (Linux /proc). */
function listeningTcpPorts(pid) {
  const inodes = new Set();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const link = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (link) inodes.add(link[1]);
    } catch {
      // closed meanwhile
    }
  }
  return [`/proc/${pid}/net/tcp`, `/proc/${pid}/net/tcp6`]
    .flatMap((table) => readFileSync(table, 'utf8').trim().split('\n').slice(1))
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols[3] === '0A' && inodes.has(cols[9]))
    .map((cols) => parseInt(cols[1].split(':')[1], 16));
}

/** Paths under root (root included) whose mode grants anything to group or others. */
function openToOthers(root) {
  const stat = lstatSync(root);
  if (stat.isSymbolicLink()) return [];
  const here = (stat.mode & 0o077) !== 0 ? [`${root} ${(stat.mode & 0o777).toString(8)}`] : [];
  return stat.isDirectory() ? [...here, ...readdirSync(root).flatMap((name) => openToOthers(join(root, name)))] : here;
}

async function waitFor(probe, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting for the service');
    await new Promise((r) => setTimeout(r, 200));
  }
}

main();
