'use strict';

const path = require('node:path');

const ROOT = path.resolve(__dirname, '..', '..');

function int(name, fallback, min, max) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
  }
  return value;
}

/**
 * The scenarios in the order a run takes them, by the account whose key they load with (bench/run.js
 * switches keys between the groups): the ingest account, the seeded one, the one of the proofs' chain.
 */
const SCENARIOS_BY_KEY = {
  ingest: [
    'ingest-spread',
    'ingest-hot',
    'batch-spread',
    'batch-hot',
    'hash-versions',
    'schemas',
    'witnessing',
    'tail',
    'streams',
    'client',
    'indexes',
    'builds',
    'retention',
    'soak',
    'ha',
  ],
  bench: ['list', 'search', 'stats', 'fairness', 'export', 'verify', 'chain-verify', 'erasure'],
  proofs: ['proof'],
};
const ALL_SCENARIOS = Object.values(SCENARIOS_BY_KEY).flat();

/** Everything the run can be tuned with, read once from the environment. */
function loadBenchConfig() {
  const only = (process.env.BENCH_SCENARIOS || '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const unknown = only.filter((s) => !ALL_SCENARIOS.includes(s));
  if (unknown.length > 0)
    throw new Error(`BENCH_SCENARIOS: unknown ${unknown.join(', ')} (known: ${ALL_SCENARIOS.join(', ')})`);
  return {
    root: ROOT,
    serviceMain: path.join(ROOT, 'dist/apps/api/apps/api/src/main.js'),
    hashingLib: path.join(ROOT, 'dist/apps/api/libs/hashing/src'),
    baseDatabaseUrl: process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    /** Length of one measured run, and how many runs each figure is the median of. */
    seconds: int('BENCH_SECONDS', 5, 1, 600),
    runs: int('BENCH_RUNS', 3, 1, 50),
    warmupSeconds: int('BENCH_WARMUP_SECONDS', 1, 0, 60),
    /** Size of the seeded table (one account) the read scenarios run on. */
    events: int('BENCH_EVENTS', 1_000_000, 1_000, 50_000_000),
    /** Chains the seeded events are spread over; chain 0 gets every 10th event (the "big" chain). */
    chains: int('BENCH_CHAINS', 300, 2, 100_000),
    /** Events of the one chain (account bench-proofs) the inclusion-proof scenario reads. */
    proofEvents: int('BENCH_PROOF_EVENTS', 1_000_000, 1_000, 50_000_000),
    /** HTTP connections (and pg clients) of the ingest scenarios. */
    ingestConnections: int('BENCH_CONNECTIONS', 64, 1, 90),
    /** Events per POST /v1/events/batch, and the HTTP connections sending them (the raw-pg baselines keep BENCH_CONNECTIONS). */
    batchSize: int('BENCH_BATCH_SIZE', 100, 1, 1000),
    batchConnections: int('BENCH_BATCH_CONNECTIONS', 16, 1, 90),
    /** Concurrency of the read scenarios: the service's default pool size (DATABASE_POOL_SIZE = 10). */
    readConnections: int('BENCH_READ_CONNECTIONS', 10, 1, 80),
    readPoolSize: int('DATABASE_POOL_SIZE', 10, 1, 80),
    exportRuns: int('BENCH_EXPORT_RUNS', 5, 1, 50),
    exportEvents: 10_000,
    chainVerifyRuns: int('BENCH_CHAIN_VERIFY_RUNS', 3, 1, 20),
    /** Events of the one chain the `retention` scenario prunes, and the connections appending to it meanwhile. */
    retentionEvents: int('BENCH_RETENTION_EVENTS', 1_000_000, 1_000, 50_000_000),
    retentionConnections: int('BENCH_RETENTION_CONNECTIONS', 4, 1, 64),
    /** The tail scenario: events of the backlog read from a position, seconds of ingest streamed, and every how many requests of that ingest is a batch (0: none). */
    tailBacklog: int('BENCH_TAIL_BACKLOG', 100_000, 1_000, 10_000_000),
    tailSeconds: int('BENCH_TAIL_SECONDS', 60, 1, 3600),
    tailBatchEvery: int('BENCH_TAIL_BATCH_EVERY', 0, 0, 1_000_000),
    /** The streams scenario: seconds of ingest its one destination's lag is measured over, and of its receiver's outage (issue 27: 600). */
    streamsSeconds: int('BENCH_STREAMS_SECONDS', 60, 1, 3600),
    streamsOutageSeconds: int('BENCH_STREAMS_OUTAGE_SECONDS', 600, 1, 7200),
    scenarios: only.length > 0 ? only : ALL_SCENARIOS,
    /** A directory: write a CPU profile of the service per scenario there (see bench/README.md). */
    profileDir: process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : null,
  };
}

module.exports = { loadBenchConfig, ALL_SCENARIOS, SCENARIOS_BY_KEY };
