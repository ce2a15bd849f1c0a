'use strict';

/**
 * `node bench/storage.js` (after `npm run build`): what an event costs on disk, per relation and
 * per index, and which reads use each index. Starts the built service on a fresh database (it
 * migrates), writes STORAGE_EVENTS (100,000) events, VACUUM ANALYZEs, and prints the bytes per event
 * of the events heap, each index of `events`, `merkle_nodes` and `event_counts`, against the request
 * JSON the events were (or would have been) sent as. Drops the database at the end.
 *
 * - STORAGE_APPEND=seed (the default): the bench's seed (bench/lib/seed.js: one COPY, real hashes, the
 *   Merkle tree, its secondary indexes rebuilt by one sort each: packed tighter than appends leave them).
 * - STORAGE_APPEND=http: POST /v1/events as production does, STORAGE_CONNECTIONS (16) at a time, one
 *   event a request (STORAGE_BATCH=n: POST /v1/events/batch of n), over 300 chains; with
 *   STORAGE_SHAPE=bench the seed's events, with STORAGE_SHAPE=typical (the default for http) events
 *   of ~367 B of request JSON like an outside probe's (an e-mail actor, a path resource, a context
 *   of a request's ip, user agent, ids, method and status).
 * - STORAGE_READS=1: then runs the bench's read mix against that database through the service (list with
 *   no filter, actor=, chain_id=, a time window; `q` with an action prefix and context.ip; statistics
 *   by day and by action; the live tail; an export of 10 % of the events; proofs; event and chain
 *   verification; GET of one event; appends) and prints `pg_stat_user_indexes.idx_scan` of each index
 *   per read, each read's counts taken after the service's backends flushed their statistics.
 * - STORAGE_SERVICE_MAIN=<another build's main.js> measures that build's schema instead.
 */
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { loadBenchConfig } = require('./lib/config');
const { benchDatabaseName, createDatabase, dropDatabase, withClient } = require('./lib/database');
const { apiId } = require('./lib/ids');
const { freePort, startNode, stopChild, waitUntilReady } = require('./lib/processes');
const { seedEvents } = require('./lib/seed');
const { prng } = require('./lib/stats');

const KEY = 'storage-key-0123456789abcdef-0123';
const ADMIN_KEY = 'storage-admin-0123456789abcdef-01';
const RELATIONS = ['events', 'merkle_nodes', 'event_counts'];
const CHAINS = 300;
const ACTIONS = ['user.login', 'document.create', 'document.read', 'document.update', 'role.grant', 'invoice.pay'];

/** The seed's event shape as a request (bench/lib/seed.js writes these fields). */
function benchEvent(k, random) {
  const resource = random() < 0.1 ? null : `doc:${Math.floor(random() * 50_000)}`;
  const context =
    random() < 0.05
      ? null
      : {
          ip: `10.${k % 250}.${(k >> 8) % 250}.${k % 7}`,
          session: `s_${Math.floor(random() * 1e9)}`,
          n: k,
          tags: ['bench', k % 3 === 0 ? 'admin' : 'user'],
        };
  return {
    actor: `user_${Math.floor(random() * 1000)}`,
    action: ACTIONS[Math.floor(random() * ACTIONS.length)],
    resource,
    context,
    chain: `seed-${String(Math.floor(random() * CHAINS)).padStart(4, '0')}`,
  };
}

const hex = (random, n) =>
  Array.from({ length: n }, () =>
    Math.floor(random() * 16)
      .toString(16)
      .toString(),
  ).join('');
const AGENTS = [
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.1 Safari/605.1.15',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  'okhttp/4.12.0',
];

/** A typical audit event of a SaaS request, ~367 B of request JSON. */
function typicalEvent(k, random) {
  const user = Math.floor(random() * 5000);
  return {
    actor: `user${user}@customer-${user % 97}.example.com`,
    action: ACTIONS[Math.floor(random() * ACTIONS.length)],
    resource: `/projects/${Math.floor(random() * 2000)}/documents/${hex(random, 8)}-${hex(random, 4)}`,
    context: {
      ip: `203.0.${Math.floor(random() * 256)}.${Math.floor(random() * 256)}`,
      user_agent: AGENTS[Math.floor(random() * AGENTS.length)].slice(0, 80),
      request_id: `req_${hex(random, 24)}`,
      session_id: `sess_${hex(random, 16)}`,
      method: random() < 0.5 ? 'PATCH' : 'POST',
      status: random() < 0.95 ? 200 : 403,
    },
    chain: `tenant-${String(Math.floor(random() * CHAINS)).padStart(4, '0')}`,
  };
}

/** One request to the service: its status and parsed body (or text). */
function request(base, method, urlPath, { body, key = KEY, headers = {} } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${base}${urlPath}`,
      {
        method,
        agent,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      },
      (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed = text;
          try {
            parsed = JSON.parse(text);
          } catch {
            // CSV, NDJSON
          }
          resolve({ status: res.statusCode, body: parsed, text });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

async function expectOk(promise, what) {
  const res = await promise;
  if (res.status < 200 || res.status > 299)
    throw new Error(`${what}: HTTP ${res.status} ${String(res.text).slice(0, 300)}`);
  return res;
}

/** Appends `total` events made by `make(k, random)` over HTTP; returns the request JSON's bytes per event. */
async function appendOverHttp(base, total, make, { connections, batch, log }) {
  const random = prng(0x5eed);
  let next = 0;
  let jsonBytes = 0;
  const started = Date.now();
  let reported = 0;
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (next < total) {
        const start = next;
        const n = Math.min(batch, total - start);
        next += n;
        const events = Array.from({ length: n }, (_, i) => make(start + i, random));
        for (const e of events) jsonBytes += Buffer.byteLength(JSON.stringify(e));
        const body = batch === 1 ? JSON.stringify(events[0]) : JSON.stringify({ events });
        await expectOk(request(base, 'POST', batch === 1 ? '/v1/events' : '/v1/events/batch', { body }), 'append');
        if (next - reported >= 10_000) {
          reported = next;
          log(`  appended ${next.toLocaleString('en-US')} (${Math.round(next / ((Date.now() - started) / 1000))}/s)`);
        }
      }
    }),
  );
  return jsonBytes / total;
}

/** idx_scan of every index of RELATIONS (and the chains'), by name. */
async function indexScans(client) {
  const { rows } = await client.query(
    `SELECT indexrelname AS name, idx_scan::float8 AS scans FROM pg_stat_user_indexes
      WHERE relname = ANY($1::text[]) ORDER BY indexrelname`,
    [[...RELATIONS, 'chains']],
  );
  return Object.fromEntries(rows.map((r) => [r.name, r.scans]));
}

/** Opens the live tail, lets `during()` append, and reads until `expected` events arrived. */
function tailWhile(base, expected, during) {
  return new Promise((resolve, reject) => {
    let received = 0;
    let done = false;
    const req = http.get(`${base}/v1/events/stream`, { headers: { authorization: `Bearer ${KEY}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream: HTTP ${res.statusCode}`));
      res.setEncoding('utf8');
      let opened = false;
      res.on('data', (chunk) => {
        received += (chunk.match(/\ndata: /g) || []).length;
        if (!opened) {
          opened = true;
          during().catch(reject);
        }
        if (received >= expected && !done) {
          done = true;
          req.destroy();
          resolve(received);
        }
      });
    });
    req.on('error', (error) => (done ? undefined : reject(error)));
    setTimeout(() => {
      if (!done) {
        done = true;
        req.destroy();
        reject(new Error(`tail: ${received} of ${expected} events in 60 s`));
      }
    }, 60_000);
  });
}

/**
 * The bench's read mix (bench/scenarios: list, search, stats, tail, export, proof, verify), each
 * read `n` times (the tail, export and chain verification fewer), against the account's events.
 */
function readMix(base, seed) {
  const random = prng(7);
  const pick = (list) => list[Math.floor(random() * list.length)];
  const n = Number(process.env.STORAGE_READ_REQUESTS || 200);
  const times = async (count, fn) => {
    for (let i = 0; i < count; i++) await fn(i);
  };
  const get = (p, what, key) => expectOk(request(base, 'GET', p, { key }), what);
  const list = (params) => get(`/v1/events?${new URLSearchParams({ limit: '50', ...params })}`, 'list');
  const window = (fraction) => {
    const a = seed.times[Math.floor(random() * seed.times.length * (1 - fraction))];
    return { after: a, before: new Date(Date.parse(a) + seed.spanMs * fraction).toISOString() };
  };
  let nextPage = async () => {
    const first = await list({});
    return first.body.next_cursor ?? first.body.nextCursor ?? null;
  };
  return [
    ['list', () => times(n, () => list({}))],
    [
      'list, next page',
      async () => {
        const cursor = await nextPage();
        nextPage = null;
        if (!cursor) throw new Error('list: no cursor');
        await times(n, () => list({ cursor }));
      },
    ],
    ['list actor=', () => times(n, () => list({ actor: pick(seed.actors) }))],
    ['list chain_id=', () => times(n, () => list({ chain_id: pick(seed.chains) }))],
    ['list 1 % window', () => times(n, () => list(window(0.01)))],
    [
      'q action:<prefix>* context.ip:',
      () =>
        times(n, () => {
          const ev = pick(seed.events);
          const prefix = ev.action.slice(0, ev.action.indexOf('.') + 1);
          return list({ q: `action:${prefix}* context.ip:"${ev.ip}"` });
        }),
    ],
    [
      'stats by day, by action',
      () =>
        times(n / 10, (i) =>
          get(
            `/v1/stats/events?${new URLSearchParams({ after: seed.times[0], before: seed.times.at(-1), group_by: i % 2 ? 'day' : 'action' })}`,
            'stats',
          ),
        ),
    ],
    ['GET event', () => times(n, () => get(`/v1/events/${pick(seed.ids)}`, 'event'))],
    ['event verify', () => times(n, () => get(`/v1/events/${pick(seed.ids)}/verify`, 'verify'))],
    ['proof', () => times(n, () => get(`/v1/events/${pick(seed.ids)}/proof`, 'proof'))],
    ['chain verify', () => times(5, () => get(`/v1/chain/${pick(seed.chains)}/verify`, 'chain verify'))],
    [
      'export 10 %',
      () =>
        times(3, () => get(`/v1/events/export?${new URLSearchParams({ format: 'json', ...window(0.1) })}`, 'export')),
    ],
    [
      'append (single)',
      () =>
        times(n, (i) =>
          expectOk(
            request(base, 'POST', '/v1/events', { body: JSON.stringify(seed.make(10_000_000 + i, random)) }),
            'append',
          ),
        ),
    ],
    [
      'tail while appending',
      () =>
        tailWhile(base, n, () =>
          Promise.all(
            Array.from({ length: 4 }, (_, c) =>
              times(n / 4, (i) =>
                expectOk(
                  request(base, 'POST', '/v1/events', {
                    body: JSON.stringify(seed.make(20_000_000 + c * n + i, random)),
                  }),
                  'append',
                ),
              ),
            ),
          ),
        ),
    ],
  ];
}

async function main() {
  const cfg = loadBenchConfig();
  const total = Number(process.env.STORAGE_EVENTS || 100_000);
  const mode = process.env.STORAGE_APPEND || 'seed';
  if (!['seed', 'http'].includes(mode)) throw new Error(`STORAGE_APPEND: seed or http, not ${mode}`);
  const shape = process.env.STORAGE_SHAPE || (mode === 'http' ? 'typical' : 'bench');
  const make = { bench: benchEvent, typical: typicalEvent }[shape];
  if (!make || (mode === 'seed' && shape !== 'bench')) throw new Error(`STORAGE_SHAPE ${shape} with ${mode}`);
  const reads = process.env.STORAGE_READS === '1';
  const log = (line) => console.log(line);
  const name = `${benchDatabaseName()}_storage`;
  const url = await createDatabase(cfg.baseDatabaseUrl, name);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-storage-'));
  let service = null;
  try {
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const logFile = path.join(tmp, 'service.log');
    const start = async () => {
      // Another build's main.js (STORAGE_SERVICE_MAIN) measures its schema with the same seed (which writes either).
      service = startNode(process.env.STORAGE_SERVICE_MAIN || cfg.serviceMain, {
        logFile,
        env: {
          ...process.env,
          DATABASE_URL: url,
          PORT: String(port),
          HOST: '127.0.0.1',
          METRICS_PORT: '0',
          LOG_LEVEL: 'warn',
          API_KEYS: `storage:${KEY},storage:${ADMIN_KEY}:admin`,
          DATA_DIR: path.join(tmp, 'data'),
        },
      });
      await waitUntilReady(service, `${base}/health/ready`, { logFile });
    };
    await start();
    const hashing = require(cfg.hashingLib);
    let jsonPerEvent;
    let seed;
    if (mode === 'seed') {
      await stopChild(service);
      service = null;
      const seeded = await withClient(url, async (client) => {
        const { rows: accounts } = await client.query(`SELECT id FROM accounts WHERE name = 'storage'`);
        // The seed takes the id as the API gives it (acc_…), not the stored uuid's text.
        const accountId = apiId('acc', accounts[0].id);
        return seedEvents(client, { accountId, total, chainCount: CHAINS, hashing, log: () => undefined });
      });
      // The request JSON the seed's events would have been sent as (the same generator's shape).
      const random = prng(0x5eed);
      let bytes = 0;
      for (let k = 0; k < 10_000; k++) bytes += Buffer.byteLength(JSON.stringify(benchEvent(k, random)));
      jsonPerEvent = bytes / 10_000;
      seed = { chains: seeded.chains.map((c) => c.id), ids: seeded.sampleIds };
    } else {
      const connections = Number(process.env.STORAGE_CONNECTIONS || 16);
      const batch = Number(process.env.STORAGE_BATCH || 1);
      log(
        `appending ${total.toLocaleString('en-US')} ${shape} events over HTTP, ${connections} connections, ${batch} a request`,
      );
      jsonPerEvent = await appendOverHttp(base, total, make, { connections, batch, log });
    }
    const result = await withClient(url, async (client) => {
      for (const relation of RELATIONS) await client.query(`VACUUM ANALYZE ${relation}`);
      const { rows: sizes } = await client.query(
        `SELECT c.relname AS name, pg_relation_size(c.oid)::float8 AS bytes,
                CASE WHEN c.relkind = 'i' THEN 'index' ELSE 'table' END AS kind
           FROM pg_class c
          WHERE c.oid = ANY($1::regclass[])
             OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = ANY($1::regclass[]))
          ORDER BY kind DESC, name`,
        [RELATIONS],
      );
      const {
        rows: [width],
      } = await client.query(
        `SELECT avg(pg_column_size(t.*))::float8 AS row, avg(pg_column_size(t.previous_hash))::float8 AS previous
           FROM events t`,
      );
      const { rows: counts } = await client.query(`SELECT count(*)::int AS n FROM event_counts`);
      // What the read mix draws from: the account's chains, events, actors and time span.
      const { rows: sample } = await client.query(
        `SELECT audit_uuid_ulid('evt', id) AS id, actor, action, context->>'ip' AS ip,
                to_char("timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS time
           FROM events TABLESAMPLE SYSTEM (5) REPEATABLE (1) WHERE context ? 'ip' LIMIT 2000`,
      );
      const { rows: chains } = await client.query(
        `SELECT audit_uuid_ulid('chn', id) AS id FROM chains WHERE last_position > 0`,
      );
      return { sizes, width, rollupRows: counts[0].n, sample, chains: chains.map((c) => c.id) };
    });
    const per = (bytes) => bytes / total;
    const all = result.sizes.reduce((sum, r) => sum + r.bytes, 0);
    console.log(
      `${total.toLocaleString('en-US')} ${shape} events (${mode}) after VACUUM ANALYZE: ${jsonPerEvent.toFixed(0)} B of request JSON each; bytes per event`,
    );
    for (const r of result.sizes)
      console.log(`  ${r.kind === 'index' ? '  ' : ''}${r.name.padEnd(34)} ${per(r.bytes).toFixed(0).padStart(5)}`);
    console.log(
      `  total ${per(all).toFixed(0)} = ${(all / total / jsonPerEvent).toFixed(2)}× the request JSON; ` +
        `event row ${result.width.row.toFixed(0)} B of which previous_hash ${result.width.previous.toFixed(0)} B; ` +
        `event_counts ${result.rollupRows.toLocaleString('en-US')} rows`,
    );
    if (!reads) return;

    if (!service) await start();
    const sample = result.sample;
    if (sample.length === 0) throw new Error('no events to read');
    const times = sample.map((s) => s.time).sort();
    seed = {
      chains: result.chains,
      ids: sample.map((s) => s.id),
      actors: [...new Set(sample.map((s) => s.actor))],
      events: sample,
      times,
      spanMs: Date.parse(times.at(-1)) - Date.parse(times[0]),
      make,
    };
    const table = {};
    const readNames = [];
    await withClient(url, async (client) => {
      // What the writes above left unflushed in the service's backends is counted before the first read.
      await new Promise((resolve) => setTimeout(resolve, 11_000));
      let before = await indexScans(client);
      for (const [label, run] of readMix(base, seed)) {
        const started = Date.now();
        await run();
        const seconds = (Date.now() - started) / 1000;
        // The service's backends flush their statistics when idle, at most 10 s (PGSTAT_IDLE_INTERVAL) later.
        await new Promise((resolve) => setTimeout(resolve, 11_000));
        const after = await indexScans(client);
        readNames.push(label);
        for (const [index, scans] of Object.entries(after)) {
          table[index] ??= {};
          table[index][label] = scans - (before[index] ?? 0);
        }
        log(`  read: ${label} (${seconds.toFixed(1)} s)`);
        before = after;
      }
    });
    console.log('\nidx_scan per index under the read mix (index: read × scans):');
    for (const [index, byRead] of Object.entries(table)) {
      const used = readNames.filter((r) => byRead[r] > 0).map((r) => `${r} ×${byRead[r]}`);
      console.log(`  ${index.padEnd(34)} ${used.length ? used.join('; ') : 'unused'}`);
    }
  } finally {
    if (service) await stopChild(service);
    agent.destroy();
    if (process.env.STORAGE_KEEP_DATABASE !== '1') await dropDatabase(cfg.baseDatabaseUrl, name);
    else console.log(`kept database ${name}`);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
