'use strict';

/**
 * Per-event cost of recomputing a hash, version 1 against version 2, and of the `hashing` member a
 * version-2 event carries on the wire (its salts derived from its seed): a few seconds, no database.
 *
 *   node bench/hash-micro.js                       this checkout's libs/hashing (its TypeScript source)
 *   node bench/hash-micro.js <dir> [<dir> …]       each dir's libs/hashing/src, measured interleaved:
 *     mkdir -p /tmp/before && git archive <ref> libs/hashing/src | tar -x -C /tmp/before && node bench/hash-micro.js . /tmp/before
 *
 * Figures are CPU time (process.cpuUsage) per event, the best of 7 rounds of ~0.3 s, the libraries
 * taking turns within each round, so that a busy machine slows all of them alike. Events are shaped
 * as bench/lib/seed.js seeds them: an actor, a resource, a context of four members (two strings, a
 * number, an array).
 */
const path = require('node:path');

const root = path.join(__dirname, '..');
require('ts-node').register({ transpileOnly: true, project: path.join(root, 'tsconfig.json') });
require('tsconfig-paths/register');

const dirs = process.argv.length > 2 ? process.argv.slice(2) : [root];
const libs = dirs.map((dir) => ({ dir, hashing: require(path.resolve(dir, 'libs/hashing/src')) }));

const N = 1000;
const events = Array.from({ length: N }, (_, k) => ({
  id: `evt_01JQ3V2D1A2B3C4D5E6F7G${String(k).padStart(4, '0')}`,
  chainId: 'chn_01JQ3V2C8N4K7M2P9R6T0V1XCH',
  position: k + 1,
  actor: `user_${k % 1000}`,
  action: 'document.update',
  resource: `doc:${k % 50_000}`,
  context: {
    ip: `10.${k % 250}.${(k >> 8) % 250}.${k % 7}`,
    session: `s_${k * 7919}`,
    n: k,
    tags: ['bench', k % 3 === 0 ? 'admin' : 'user'],
  },
  timestamp: new Date(1_800_000_000_000 + k * 1000).toISOString(),
  previousHash: 'ab'.repeat(32),
}));
const v1 = events.map((e) => ({ ...e, saltSeed: null, erasure: null }));
const v2 = events.map((e, k) => ({ ...e, saltSeed: (k * 2654435761).toString(16).padStart(32, '0'), erasure: null }));

/** An event as a list page writes it (apps/api/src/events/event.mapper.ts): the view, JSON.stringify'd. */
function listItem(h, e) {
  const view = {
    id: e.id,
    actor: e.actor,
    action: e.action,
    resource: e.resource,
    context: e.context,
    chain: { id: e.chainId, name: 'seed-big', position: e.position },
    hash: e.previousHash,
    previousHash: e.previousHash,
    timestamp: e.timestamp,
    createdAt: e.timestamp,
  };
  const hashing = h.hashingOf(e);
  if (hashing) {
    view.hashing = hashing;
    view.erased = h.erasedFields(hashing);
  }
  return JSON.stringify(view);
}

const figures = [
  ['v1 recompute (recomputeStoredHash)', (h) => (i) => h.recomputeStoredHash(v1[i])],
  ['v2 recompute (recomputeStoredHash)', (h) => (i) => h.recomputeStoredHash(v2[i])],
  ['v2 salts from the seed (hashingOf)', (h) => (i) => h.hashingOf(v2[i])],
  ['v1 list item (view, JSON.stringify)', (h) => (i) => listItem(h, v1[i])],
  ['v2 list item (view + hashing, JSON)', (h) => (i) => listItem(h, v2[i])],
];

/** CPU µs per call of fn over the N events, ~0.3 s of it. */
function once(fn) {
  let done = 0;
  const start = process.cpuUsage();
  let used = 0;
  do {
    for (let i = 0; i < N; i++) fn(i);
    done += N;
    const { user, system } = process.cpuUsage(start);
    used = user + system;
  } while (used < 300_000);
  return used / done;
}

// The libraries must agree before their speed means anything.
for (const { dir, hashing } of libs.slice(1)) {
  for (const list of [v1, v2])
    for (const e of list)
      if (hashing.recomputeStoredHash(e) !== libs[0].hashing.recomputeStoredHash(e))
        throw new Error(`${dir} and ${libs[0].dir} hash event ${e.id} differently`);
}

const best = libs.map(() => figures.map(() => Infinity));
for (let round = 0; round < 7; round++)
  for (let f = 0; f < figures.length; f++)
    for (let l = 0; l < libs.length; l++) {
      const fn = figures[f][1](libs[l].hashing);
      best[l][f] = Math.min(best[l][f], once(fn));
    }

for (let l = 0; l < libs.length; l++) {
  console.log(`${libs[l].dir}:`);
  for (let f = 0; f < figures.length; f++)
    console.log(`  ${figures[f][0].padEnd(40)} ${best[l][f].toFixed(2).padStart(6)} µs/event`);
  console.log(
    `  v2 / v1 recompute: ${(best[l][1] / best[l][0]).toFixed(2)}×, list item: ${(best[l][4] / best[l][3]).toFixed(2)}×`,
  );
}
