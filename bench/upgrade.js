'use strict';

/**
 * `node bench/upgrade.js <main.js of the older build>` (after `npm run build`): how long the built
 * service takes to upgrade a database the older build made, at start, and what it answers meanwhile
 * (issue 28: ≤ 5 minutes for 1,000,000 events, 503 and never 500 on /health/ready while it runs).
 *
 * Starts the older build on a fresh database (it migrates to its schema) and stops it; seeds
 * UPGRADE_EVENTS (1,000,000) events over 300 chains with the bench's seed (real hashes, Merkle tree,
 * one COPY: the seed writes the columns both schemas have); VACUUM ANALYZEs; then starts the built
 * service on it and polls /health/ready every 100 ms until 200, counting the answers by status.
 * Prints the time from start to ready, the answers, and the migrations that ran. Drops the database.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { loadBenchConfig } = require('./lib/config');
const { benchDatabaseName, createDatabase, dropDatabase, withClient } = require('./lib/database');
const { apiId } = require('./lib/ids');
const { freePort, startNode, stopChild, waitUntilReady } = require('./lib/processes');
const { seedEvents } = require('./lib/seed');

async function main() {
  const olderMain = process.argv[2];
  if (!olderMain || !fs.existsSync(olderMain))
    throw new Error('usage: node bench/upgrade.js <main.js of the older build>');
  const cfg = loadBenchConfig();
  const total = Number(process.env.UPGRADE_EVENTS || 1_000_000);
  const name = `${benchDatabaseName()}_upgrade`;
  const url = await createDatabase(cfg.baseDatabaseUrl, name);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-upgrade-'));
  const env = (port) => ({
    ...process.env,
    DATABASE_URL: url,
    PORT: String(port),
    HOST: '127.0.0.1',
    METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
    API_KEYS: 'upgrade:upgrade-key-0123456789abcdef-0123',
    DATA_DIR: path.join(tmp, 'data'),
    STREAM_DELIVERY: 'false',
  });
  try {
    let port = await freePort();
    const older = startNode(olderMain, { logFile: path.join(tmp, 'older.log'), env: env(port) });
    await waitUntilReady(older, `http://127.0.0.1:${port}/health/ready`, { logFile: path.join(tmp, 'older.log') });
    await stopChild(older);
    const hashing = require(cfg.hashingLib);
    const before = await withClient(url, async (client) => {
      const { rows: accounts } = await client.query(`SELECT id FROM accounts WHERE name = 'upgrade'`);
      // The seed takes the id as the API gives it (acc_…): the older build's varchar id as it is, a uuid's text converted.
      const accountId = apiId('acc', accounts[0].id);
      const seeded = Date.now();
      await seedEvents(client, { accountId, total, chainCount: 300, hashing, log: console.log });
      console.log(`seeded ${total.toLocaleString('en-US')} events in ${((Date.now() - seeded) / 1000).toFixed(0)} s`);
      await client.query('VACUUM ANALYZE');
      const { rows } = await client.query(`SELECT name FROM typeorm_migrations ORDER BY id`);
      return rows.map((row) => row.name);
    });

    port = await freePort();
    const statuses = new Map();
    const started = Date.now();
    const service = startNode(cfg.serviceMain, { logFile: path.join(tmp, 'service.log'), env: env(port) });
    let readyAt = null;
    while (readyAt === null) {
      if (service.exitCode !== null)
        throw new Error(`the service exited: ${fs.readFileSync(path.join(tmp, 'service.log'), 'utf8')}`);
      if (Date.now() - started > 30 * 60_000) throw new Error('not ready after 30 minutes');
      const status = await fetch(`http://127.0.0.1:${port}/health/ready`).then(
        (res) => res.status,
        () => 'refused',
      );
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
      if (status === 200) readyAt = Date.now();
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await stopChild(service);
    const after = await withClient(url, async (client) => {
      const { rows } = await client.query(`SELECT name FROM typeorm_migrations ORDER BY id`);
      return rows.map((row) => row.name);
    });
    const seconds = (readyAt - started) / 1000;
    console.log(
      `upgrade of ${total.toLocaleString('en-US')} events: ready after ${seconds.toFixed(1)} s (target ≤ 300 s: ${seconds <= 300 ? 'PASS' : 'MISS'})`,
    );
    console.log(`  /health/ready answers while starting: ${[...statuses].map(([s, n]) => `${s} ×${n}`).join(', ')}`);
    console.log(
      `  any 5xx but 503: ${[...statuses.keys()].some((s) => typeof s === 'number' && s >= 500 && s !== 503) ? 'YES (MISS)' : 'none'}`,
    );
    console.log(`  migrations run: ${after.slice(before.length).join(', ') || 'none'}`);
  } finally {
    await dropDatabase(cfg.baseDatabaseUrl, name);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
