'use strict';

/**
 * `node bench/storage.js` (after `npm run build`): what an event costs on disk, per relation and
 * per index. Starts the built service once on a fresh database (it migrates), seeds
 * STORAGE_EVENTS (100,000) typical events with the bench's seed (real hashes, the Merkle tree),
 * VACUUM ANALYZEs, and prints the bytes per event of the events heap, each index of `events`,
 * and `merkle_nodes`, with the share of what issue 20 added: its indexes (ix_events_account_txid,
 * ix_events_context), the txid column, and the statistics' day rollup `event_counts` with its key
 * (one row per account, UTC day, chain and action the seed wrote). Drops the database at the end.
 * STORAGE_SERVICE_MAIN=<another build's main.js> measures that build's schema instead.
 */
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { loadBenchConfig } = require('./lib/config');
const { benchDatabaseName, createDatabase, dropDatabase, withClient } = require('./lib/database');
const { apiId } = require('./lib/ids');
const { freePort, startNode, stopChild, waitUntilReady } = require('./lib/processes');
const { seedEvents } = require('./lib/seed');

const NEW_INDEXES = ['ix_events_account_txid', 'ix_events_context'];
const ROLLUP = ['event_counts', 'pk_event_counts'];

async function main() {
  const cfg = loadBenchConfig();
  const total = Number(process.env.STORAGE_EVENTS || 100_000);
  const name = `${benchDatabaseName()}_storage`;
  const url = await createDatabase(cfg.baseDatabaseUrl, name);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-storage-'));
  try {
    const port = await freePort();
    const logFile = path.join(tmp, 'service.log');
    // Another build's main.js (STORAGE_SERVICE_MAIN) measures its schema with the same seed (which writes either).
    const service = startNode(process.env.STORAGE_SERVICE_MAIN || cfg.serviceMain, {
      logFile,
      env: {
        ...process.env,
        DATABASE_URL: url,
        PORT: String(port),
        HOST: '127.0.0.1',
        METRICS_PORT: '0',
        LOG_LEVEL: 'warn',
        API_KEYS: 'storage:storage-key-0123456789abcdef-0123',
        DATA_DIR: path.join(tmp, 'data'),
      },
    });
    await waitUntilReady(service, `http://127.0.0.1:${port}/health/ready`, { logFile });
    await stopChild(service);
    const hashing = require(cfg.hashingLib);
    const rows = await withClient(url, async (client) => {
      const { rows: accounts } = await client.query(`SELECT id FROM accounts WHERE name = 'storage'`);
      // The seed takes the id as the API gives it (acc_…), not the stored uuid's text.
      const accountId = apiId('acc', accounts[0].id);
      await seedEvents(client, { accountId, total, chainCount: 300, hashing, log: () => undefined });
      await client.query('VACUUM ANALYZE events');
      await client.query('VACUUM ANALYZE merkle_nodes');
      await client.query('VACUUM ANALYZE event_counts');
      const { rows: sizes } = await client.query(
        `SELECT c.relname AS name, pg_relation_size(c.oid)::float8 AS bytes,
                CASE WHEN c.relkind = 'i' THEN 'index' ELSE 'table' END AS kind
           FROM pg_class c
          WHERE c.oid IN ('events'::regclass, 'merkle_nodes'::regclass, 'event_counts'::regclass)
             OR c.oid IN (SELECT indexrelid FROM pg_index
                           WHERE indrelid IN ('events'::regclass, 'merkle_nodes'::regclass, 'event_counts'::regclass))
          ORDER BY kind DESC, name`,
      );
      const { rows: width } = await client.query(
        `SELECT avg(pg_column_size(t.*))::float8 AS row, avg(pg_column_size(t.txid))::float8 AS txid FROM events t`,
      );
      const { rows: counts } = await client.query(`SELECT count(*)::int AS n FROM event_counts`);
      return { sizes, width: width[0], rollupRows: counts[0].n };
    });
    const per = (bytes) => Math.round(bytes / total);
    const all = rows.sizes.reduce((sum, r) => sum + r.bytes, 0);
    const sum = (names) => rows.sizes.filter((r) => names.includes(r.name)).reduce((n, r) => n + r.bytes, 0);
    const indexes = sum(NEW_INDEXES);
    const rollup = sum(ROLLUP);
    const added = indexes + rollup;
    const txidColumn = rows.width.txid * total;
    const before = all - added - txidColumn;
    console.log(`${total.toLocaleString('en-US')} events after VACUUM ANALYZE: bytes per event`);
    for (const r of rows.sizes)
      console.log(`  ${r.kind === 'index' ? '  ' : ''}${r.name.padEnd(34)} ${String(per(r.bytes)).padStart(5)}`);
    console.log(
      `  total ${per(all)}; of which issue 20 added ${per(added + txidColumn)} (indexes ${per(indexes)}, txid column ~${per(txidColumn)}, ` +
        `event_counts ${per(rollup)}: ${rows.rollupRows.toLocaleString('en-US')} rows)`,
    );
    console.log(
      `  without them: ${per(before)}; increase ${(((all - before) / before) * 100).toFixed(1)} % (target ≤ 25 %)`,
    );
  } finally {
    await dropDatabase(cfg.baseDatabaseUrl, name);
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
