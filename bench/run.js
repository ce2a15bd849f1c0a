'use strict';

/**
 * `npm run bench`: starts the built service on a fresh PostgreSQL database (for the ingest and
 * batch scenarios also the same service without the Merkle tree on a second one), seeds what the
 * read scenarios need, measures every scenario of issue 4 against a baseline in the same run,
 * prints one table and writes the run's summary, bench/results/<YYYY-MM-DD-HHMM>.md (kept in git), and
 * its raw report, bench/results/raw/<YYYY-MM-DD-HHMM>.md and .json (ignored by git). Tuning: see
 * bench/README.md.
 */
const { execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { loadBenchConfig, SCENARIOS_BY_KEY } = require('./lib/config');
const { benchDatabaseName, createDatabase, dropDatabase, pool, withClient } = require('./lib/database');
const { apiId } = require('./lib/ids');
const {
  freePort,
  startNode,
  waitUntilReady,
  stopChild,
  stopAllChildren,
  killAllChildrenNow,
  RssSampler,
  tail,
} = require('./lib/processes');
const { CpuMeter } = require('./lib/cpu');
const { writeReport } = require('./lib/report');
const { seedEvents } = require('./lib/seed');
const { ingestSpread, ingestHot } = require('./scenarios/ingest');
const { batchSpread, batchHot } = require('./scenarios/batch');
const { listScenario } = require('./scenarios/list');
const { exportScenario } = require('./scenarios/export');
const { verifyScenario, chainVerifyScenario } = require('./scenarios/verify');
const { proofScenario } = require('./scenarios/proof');
const { searchScenario, statsScenario } = require('./scenarios/search');
const { tailScenario } = require('./scenarios/tail');
const { streamsScenario } = require('./scenarios/streams');
const { indexesScenario } = require('./scenarios/indexes');
const { buildsScenario } = require('./scenarios/builds');
const { retentionScenario } = require('./scenarios/retention');
const { soakScenario } = require('./scenarios/soak');
const { fairnessScenario } = require('./scenarios/fairness');
const { hashVersionsScenario } = require('./scenarios/hash-versions');
const { schemasScenario } = require('./scenarios/schemas');
const { erasureScenario } = require('./scenarios/erasure');
const { witnessingScenario } = require('./scenarios/witnessing');
const { clientScenario } = require('./scenarios/client');
const { haScenario } = require('./scenarios/ha');

const SCENARIOS = {
  'ingest-spread': ingestSpread,
  'ingest-hot': ingestHot,
  'batch-spread': batchSpread,
  'batch-hot': batchHot,
  list: listScenario,
  export: exportScenario,
  verify: verifyScenario,
  'chain-verify': chainVerifyScenario,
  proof: proofScenario,
  search: searchScenario,
  stats: statsScenario,
  tail: tailScenario,
  streams: streamsScenario,
  indexes: indexesScenario,
  builds: buildsScenario,
  retention: retentionScenario,
  soak: soakScenario,
  fairness: fairnessScenario,
  'hash-versions': hashVersionsScenario,
  schemas: schemasScenario,
  erasure: erasureScenario,
  witnessing: witnessingScenario,
  client: clientScenario,
  ha: haScenario,
};
const NEEDS_SEED = ['list', 'export', 'verify', 'chain-verify', 'search', 'stats', 'fairness', 'erasure'];
/** Scenarios that also measure the service without the Merkle tree, on a second database. */
const INGEST = ['ingest-spread', 'ingest-hot', 'batch-spread', 'batch-hot'];

/**
 * Node flags of both services. V8's memory reducer shrinks a heap some seconds after its process
 * goes idle, with full GCs on a second core: the idle service did that in the middle of the other
 * service's run. Ingest over 64 chains, 7 rounds, order reversed every other round: the service
 * right after the no-tree service's run served 681-760 events/s at 1.0-1.1 cores against 880-973
 * otherwise (ratio 0.95x by pairs, 0.81x by medians); with the reducer off, 0.86-1.05 by pairs,
 * 1.00x. Under load the reducer does nothing, so the figures of each service are its own.
 */
const SERVICE_NODE_ARGS = ['--no-memory-reducer'];

/** Scenarios that also measure the service with metrics and logs off (issue 18's A/B). */
const QUIET_AB = [...INGEST, 'list'];

/**
 * The same build, settings and database as the measured service, with observability off
 * (METRICS_PORT=0 LOG_LEVEL=silent): the ingest, batch and list scenarios load both in one run, so
 * they price the metrics and the log lines (target: within 5 %). It appends to the same chains as
 * the measured service, which instances sharing a database may.
 */
async function startQuietService(cfg, serviceEnv, cpu) {
  if (!cfg.scenarios.some((s) => QUIET_AB.includes(s))) return null;
  const port = await freePort();
  const logFile = path.join(state.tmpDir, 'service-quiet.log');
  state.quietService = startNode(cfg.serviceMain, {
    logFile,
    env: {
      ...serviceEnv,
      BENCH_PROFILE_FILE: '',
      PORT: String(port),
      METRICS_PORT: '0',
      LOG_LEVEL: 'silent',
      DATA_DIR: path.join(state.tmpDir, 'data-quiet'),
    },
    nodeArgs: SERVICE_NODE_ARGS,
  });
  const serviceUrl = `http://127.0.0.1:${port}`;
  await waitUntilReady(state.quietService, `${serviceUrl}/health/ready`, { logFile });
  cpu.track('serviceQuiet', state.quietService.pid, 'service');
  log(`service without metrics and logs ready on ${serviceUrl} (pid ${state.quietService.pid})`);
  return { serviceUrl };
}

/** Stops the quiet service if it runs (after `list`, and before `streams`: see main()). */
async function stopQuietService(cpu) {
  if (!state.quietService) return;
  await stopChild(state.quietService);
  cpu.untrack('serviceQuiet');
  state.quietService = null;
}

/**
 * A service of the same build and settings (plus `env`) on a fresh database of its own, which
 * `prepare(client)` may alter after the migrations, seeded with `seed` events over `chainCount`
 * chains into the account `bench-ingest` (the seed of the read scenarios, smaller) and settled: for
 * scenarios that compare schemas (`indexes`) or change the data (`retention`). Dropped by
 * cleanup(); the service stops with the returned stop() or at cleanup. With `shareDatabaseOf` (another
 * variant), a second instance on that variant's database instead: nothing created or seeded (`soak`).
 */
async function startVariantService(
  name,
  serviceEnv,
  { prepare, seed, hashing, serviceMain = state.cfg.serviceMain, env = {}, chainCount = 300, shareDatabaseOf },
) {
  const url = shareDatabaseOf
    ? shareDatabaseOf.databaseUrl
    : await createBenchDatabase(`${benchDatabaseName()}_${name}`);
  const port = await freePort();
  const logFile = path.join(state.tmpDir, `service-${name}.log`);
  const child = startNode(serviceMain, {
    logFile,
    env: {
      ...serviceEnv,
      BENCH_PROFILE_FILE: '',
      DATABASE_URL: url,
      PORT: String(port),
      METRICS_PORT: String(await freePort()),
      DATA_DIR: path.join(state.tmpDir, `data-${name}`),
      ...env,
    },
    nodeArgs: SERVICE_NODE_ARGS,
  });
  const serviceUrl = `http://127.0.0.1:${port}`;
  await waitUntilReady(child, `${serviceUrl}/health/ready`, { logFile });
  const seeded = shareDatabaseOf
    ? shareDatabaseOf.seeded
    : await withClient(url, async (client) => {
        await prepare(client);
        const id = await accountId(client, 'bench-ingest');
        const result = await seedEvents(client, {
          accountId: id,
          total: seed,
          chainCount,
          hashing,
          log: () => undefined,
        });
        await settleSeed(client, log);
        return { ...result, accountId: id };
      });
  log(`service ${name} ready on ${serviceUrl} (pid ${child.pid})`);
  return { serviceUrl, databaseUrl: url, logFile, seeded, pid: child.pid, stop: () => stopChild(child) };
}

const t0 = Date.now();
const log = (message) => console.log(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${message}`);
const withTimeout = (promise, ms) => Promise.race([promise, new Promise((resolve) => setTimeout(resolve, ms).unref())]);

const state = {
  cfg: null,
  /** Names of the bench databases created so far: dropped by cleanup(). */
  databases: [],
  db: null,
  readPool: null,
  sampler: null,
  service: null,
  noTreeService: null,
  quietService: null,
  tmpDir: null,
};
let cleaning = null;

/** Idempotent: stops the children, drops the bench databases, removes the temp dir. */
function cleanup() {
  cleaning ??= (async () => {
    if (state.sampler) state.sampler.stop();
    await withTimeout(
      Promise.all([state.db, state.readPool].filter(Boolean).map((p) => p.end().catch(() => undefined))),
      3000,
    );
    await stopAllChildren();
    for (const name of state.databases) {
      try {
        await dropDatabase(state.cfg.baseDatabaseUrl, name);
        log(`dropped database ${name}`);
      } catch (error) {
        console.error(`could not drop database ${name}: ${error.message}`);
      }
    }
    if (state.tmpDir) fs.rmSync(state.tmpDir, { recursive: true, force: true });
  })();
  return cleaning;
}

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.on(signal, () => {
    log(`${signal}: cleaning up`);
    cleanup().finally(() => process.exit(code));
  });
}
process.on('exit', killAllChildrenNow);

/**
 * How fast this machine's one thread is, on the service's own work: computeEventHash (canonical
 * JSON and SHA-256) of one fixed event, back to back for a second after a short warm-up. Two
 * results whose CPU line reads the same can come from machines twice apart; compare this figure
 * before comparing absolute ones.
 */
function cpuReference(hashing) {
  const event = {
    id: 'evt_01JBENCHREFERENCE0000000000',
    chainId: 'chn_01JBENCHREFERENCE0000000000',
    position: 1,
    actor: 'user_42',
    action: 'document.update',
    resource: 'doc/42',
    context: { ip: '10.0.0.1', changes: ['title', 'body'], size: 1234 },
    timestamp: '2026-01-01T00:00:00.000Z',
    previousHash: hashing.GENESIS_HASH,
  };
  const runFor = (ms) => {
    let n = 0;
    const end = performance.now() + ms;
    while (performance.now() < end) {
      for (let i = 0; i < 100; i++) hashing.computeEventHash(event);
      n += 100;
    }
    return n;
  };
  runFor(200);
  return Math.round(runFor(1000));
}

/**
 * After a seed: fresh statistics and visibility maps for the seeded tables, then a CHECKPOINT so
 * that no scenario pays for writing the seed out. Returns the seconds VACUUM ANALYZE took.
 */
async function settleSeed(client, log) {
  const started = Date.now();
  for (const table of ['events', 'chains', 'merkle_nodes']) await client.query(`VACUUM ANALYZE ${table}`);
  const seconds = (Date.now() - started) / 1000;
  await client.query('CHECKPOINT').catch((error) => log(`CHECKPOINT skipped: ${error.message}`));
  return seconds;
}

/**
 * The same seed (the same events: its random numbers are seeded) into the database of the service
 * without the Merkle tree, when it runs: the two services then append to databases of the same
 * size, and the ingest scenarios price the tree, not the difference. (Unseeded, that database was
 * 1-2 million events smaller and the ratios leaned against the tree.)
 */
async function seedNoTreeLikewise(ctx, accountName, { total, chainCount }) {
  if (!ctx.noTree) return;
  const started = Date.now();
  await withClient(ctx.noTree.benchUrl, async (client) => {
    const id = await accountId(client, accountName);
    await seedEvents(client, { accountId: id, total, chainCount, hashing: ctx.hashing, log: () => undefined });
    await settleSeed(client, ctx.log);
  });
  ctx.log(`seeded the same into the no-tree database in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

async function environment(db, hashing) {
  const settings = [
    'shared_buffers',
    'synchronous_commit',
    'fsync',
    'wal_sync_method',
    'commit_delay',
    'max_wal_size',
    'max_connections',
  ];
  const values = {};
  for (const name of settings) values[name] = (await db.query(`SHOW ${name}`)).rows[0][name];
  const version = (await db.query('SHOW server_version')).rows[0].server_version;
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: state.cfg.root, encoding: 'utf8' }).trim();
  } catch {
    // not a git checkout
  }
  return {
    cpus: os.cpus().length,
    cpuModel: (os.cpus()[0] && os.cpus()[0].model) || 'unknown CPU',
    memoryGb: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    postgres: `PostgreSQL ${version}`,
    postgresSettings: values,
    loadAverageAtStart: os.loadavg().map((n) => Number(n.toFixed(2))),
    /** Events hashed per second by one thread (cpuReference). */
    cpuReference: cpuReference(hashing),
    commit,
  };
}

/** Creates a fresh bench database, remembered for cleanup() before anything else can fail. */
async function createBenchDatabase(name) {
  const url = await createDatabase(state.cfg.baseDatabaseUrl, name);
  state.databases.push(name);
  log(`created database ${name}`);
  return url;
}

/**
 * The account's id as the API gives it (`acc_…`: the bench uses it in paths and hands it to the
 * seed): the stored uuid's text converted (migration 1765900000000), or the varchar id of an older
 * build's database (the `builds` scenario's build before) as it is. SQL of the scenarios binds
 * ulidToUuid of it.
 */
async function accountId(db, name) {
  const { rows } = await db.query('SELECT id FROM accounts WHERE name = $1', [name]);
  if (!rows[0]) throw new Error(`account '${name}' was not created from API_KEYS`);
  return apiId('acc', rows[0].id);
}

async function main() {
  const cfg = loadBenchConfig();
  state.cfg = cfg;
  for (const file of [cfg.serviceMain, path.join(cfg.hashingLib, 'index.js')]) {
    if (!fs.existsSync(file))
      throw new Error(`${path.relative(cfg.root, file)} is missing: run \`npm run build\` first (npm run bench does)`);
  }
  const hashing = require(cfg.hashingLib);
  const startedAt = new Date();
  state.tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'audit-bench-'));
  const dbName = benchDatabaseName(startedAt);
  const benchUrl = await createBenchDatabase(dbName);

  const port = await freePort();
  const keys = {
    bench: crypto.randomBytes(16).toString('hex'),
    ingest: crypto.randomBytes(16).toString('hex'),
    proofs: crypto.randomBytes(16).toString('hex'),
    /** An admin key of the ingest account: the streams scenario manages its destinations with it. */
    ingestAdmin: crypto.randomBytes(16).toString('hex'),
    /** An admin key of the seeded account: the erasure scenario erases with it. */
    benchAdmin: crypto.randomBytes(16).toString('hex'),
  };
  const serviceLog = path.join(state.tmpDir, 'service.log');
  const serviceUrl = `http://127.0.0.1:${port}`;
  const serviceEnv = {
    ...process.env,
    BENCH_PROFILE_FILE: cfg.profileDir ? path.join(cfg.profileDir, 'current.cpuprofile') : '',
    DATABASE_URL: benchUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    RATE_LIMIT_PER_SECOND: '0',
    // Observability on, as in production: a JSON line per request (to the log file), metrics served.
    LOG_LEVEL: 'info',
    METRICS_PORT: String(await freePort()),
    API_KEYS: `bench:${keys.bench},bench:${keys.benchAdmin}:admin,bench-ingest:${keys.ingest},bench-ingest:${keys.ingestAdmin}:admin,bench-proofs:${keys.proofs}`,
    DATA_DIR: path.join(state.tmpDir, 'data'),
    // The streams scenario's webhook receiver listens on 127.0.0.1 (docs/contract.md §16: refused without this).
    STREAM_ALLOW_PRIVATE_NETWORKS: 'true',
  };
  const cpu = new CpuMeter();
  /** (Re)starts the service and points the RSS sampler and the CPU meter at the new process. */
  const startService = async () => {
    if (state.service) await stopChild(state.service);
    const nodeArgs = [
      ...SERVICE_NODE_ARGS,
      ...(cfg.profileDir ? ['-r', path.join(__dirname, 'lib', 'cpu-profile-preload.js')] : []),
    ];
    state.service = startNode(cfg.serviceMain, { logFile: serviceLog, env: serviceEnv, nodeArgs });
    await waitUntilReady(state.service, `${serviceUrl}/health/ready`, { logFile: serviceLog });
    cpu.track('service', state.service.pid);
    if (state.sampler) state.sampler.retarget(state.service.pid);
    else state.sampler = new RssSampler(state.service.pid, 10);
    log(`service ready on ${serviceUrl} (pid ${state.service.pid})`);
  };
  await startService();

  /**
   * The ingest and batch scenarios also load a second service, the same build and settings on a
   * second fresh database, with bench/lib/without-merkle-tree.js preloaded: it appends without
   * writing the Merkle tree, so the scenarios price the tree in the same run.
   */
  let noTree = null;
  const noTreeLog = path.join(state.tmpDir, 'service-no-tree.log');
  if (cfg.scenarios.some((s) => INGEST.includes(s))) {
    const noTreeUrl = await createBenchDatabase(`${dbName}_notree`);
    const noTreePort = await freePort();
    state.noTreeService = startNode(cfg.serviceMain, {
      logFile: noTreeLog,
      env: {
        ...serviceEnv,
        BENCH_PROFILE_FILE: '',
        DATABASE_URL: noTreeUrl,
        PORT: String(noTreePort),
        METRICS_PORT: String(await freePort()),
        DATA_DIR: path.join(state.tmpDir, 'data-no-tree'),
      },
      nodeArgs: [...SERVICE_NODE_ARGS, '-r', path.join(__dirname, 'lib', 'without-merkle-tree.js')],
    });
    const url = `http://127.0.0.1:${noTreePort}`;
    await waitUntilReady(state.noTreeService, `${url}/health/ready`, { logFile: noTreeLog });
    cpu.track('serviceNoTree', state.noTreeService.pid, 'service');
    noTree = {
      serviceUrl: url,
      benchUrl: noTreeUrl,
      accounts: { ingest: await withClient(noTreeUrl, (c) => accountId(c, 'bench-ingest')) },
    };
    log(`service without the Merkle tree ready on ${url} (pid ${state.noTreeService.pid})`);
  }
  const quiet = await startQuietService(cfg, serviceEnv, cpu);
  state.db = pool(benchUrl, 4);
  state.readPool = pool(benchUrl, cfg.readPoolSize);

  const ctx = {
    cfg,
    log,
    hashing,
    benchUrl,
    tmpDir: state.tmpDir,
    db: state.db,
    readPool: state.readPool,
    sampler: state.sampler,
    serviceUrl,
    restartService: startService,
    startVariantService: (name, options) => startVariantService(name, serviceEnv, { ...options, hashing }),
    noTree,
    quiet,
    cpu,
    /** The accounts' keys, for scenarios that load two accounts at once (fairness). */
    keys,
    accounts: {
      bench: await accountId(state.db, 'bench'),
      ingest: await accountId(state.db, 'bench-ingest'),
      proofs: await accountId(state.db, 'bench-proofs'),
    },
    /** Chains the raw-pg baselines append to (they write no Merkle nodes). */
    rawPgChains: [],
    seed: null,
    proofSeed: null,
  };
  const env = await environment(state.db, hashing);
  const report = {
    startedAt: startedAt.toISOString(),
    environment: env,
    config: { ...cfg, baseDatabaseUrl: undefined, root: undefined, serviceMain: undefined, hashingLib: undefined },
    seeding: null,
    scenarios: [],
  };

  if (cfg.scenarios.some((s) => NEEDS_SEED.includes(s))) {
    log(`seeding ${cfg.events.toLocaleString('en-US')} events over ${cfg.chains} chains`);
    const client = await state.db.connect();
    try {
      ctx.seed = await seedEvents(client, {
        accountId: ctx.accounts.bench,
        total: cfg.events,
        chainCount: cfg.chains,
        hashing,
        log,
      });
      log(
        `seeded in ${ctx.seed.seconds.toFixed(1)} s (${Math.round(ctx.seed.rate).toLocaleString('en-US')} events/s; COPY ${ctx.seed.copySeconds.toFixed(1)} s, then ${ctx.seed.rebuiltIndexes.length} indexes rebuilt); VACUUM ANALYZE`,
      );
      const vacuumSeconds = await settleSeed(client, log);
      report.seeding = {
        events: cfg.events,
        chains: cfg.chains,
        seconds: ctx.seed.seconds,
        rate: ctx.seed.rate,
        copySeconds: ctx.seed.copySeconds,
        rebuiltIndexes: ctx.seed.rebuiltIndexes,
        vacuumSeconds,
        bigChainEvents: ctx.seed.chains[0].position,
      };
    } finally {
      client.release();
    }
    await seedNoTreeLikewise(ctx, 'bench', { total: cfg.events, chainCount: cfg.chains });
  }

  if (cfg.scenarios.includes('proof')) {
    log(
      `seeding one chain of ${cfg.proofEvents.toLocaleString('en-US')} events (account bench-proofs) for the proof scenario`,
    );
    const client = await state.db.connect();
    try {
      ctx.proofSeed = await seedEvents(client, {
        accountId: ctx.accounts.proofs,
        total: cfg.proofEvents,
        chainCount: 1,
        hashing,
        log,
      });
      await settleSeed(client, log);
      log(`seeded the proof chain (events and Merkle nodes) in ${ctx.proofSeed.seconds.toFixed(1)} s`);
    } finally {
      client.release();
    }
    await seedNoTreeLikewise(ctx, 'bench-proofs', { total: cfg.proofEvents, chainCount: 1 });
  }

  ctx.headers = { authorization: `Bearer ${keys.ingest}`, 'content-type': 'application/json' };
  for (const name of SCENARIOS_BY_KEY.ingest) {
    if (!cfg.scenarios.includes(name)) continue;
    // The quiet service shares the database, so its delivery engine could take a destination's lease:
    // streams measures the measured service's delivery only. It is started again for `list`.
    if (name === 'streams') await stopQuietService(cpu);
    report.scenarios.push(...(await runScenario(name, ctx)));
  }
  if (state.noTreeService) {
    await stopChild(state.noTreeService);
    cpu.untrack('serviceNoTree');
  }
  ctx.headers = { authorization: `Bearer ${keys.bench}` };
  if (cfg.scenarios.includes('list') && !state.quietService) ctx.quiet = await startQuietService(cfg, serviceEnv, cpu);
  for (const name of SCENARIOS_BY_KEY.bench) {
    if (cfg.scenarios.includes(name)) report.scenarios.push(...(await runScenario(name, ctx)));
    if (name === 'list') await stopQuietService(cpu);
  }
  ctx.headers = { authorization: `Bearer ${keys.proofs}` };
  for (const name of SCENARIOS_BY_KEY.proofs) {
    if (cfg.scenarios.includes(name)) report.scenarios.push(...(await runScenario(name, ctx)));
  }

  report.finishedAt = new Date().toISOString();
  report.durationSeconds = (Date.now() - t0) / 1000;
  report.serverPeakRss = state.sampler.peak;
  const problems = [
    ['', serviceLog],
    ['(no tree) ', noTreeLog],
  ].flatMap(([prefix, file]) =>
    fs.existsSync(file)
      ? fs
          .readFileSync(file, 'utf8')
          .split('\n')
          .filter((line) => /\b(ERROR|WARN)\b/.test(line))
          .map((line) => `${prefix}${line}`)
      : [],
  );
  report.serviceLogProblems = { count: problems.length, first: problems.slice(0, 5) };
  const { text, files, targets } = writeReport(path.join(cfg.root, 'bench', 'results'), report);
  console.log(`\n${text}\n`);
  for (const t of targets)
    console.log(`${t.pass ? 'PASS' : 'MISS'}  ${t.scenario}: ${t.label} ${t.actual} (target ${t.target})`);
  if (problems.length > 0) console.log(`\nservice log: ${problems.length} WARN/ERROR lines, first: ${problems[0]}`);
  console.log(`\nwritten: ${files.map((f) => path.relative(cfg.root, f)).join(', ')}`);
}

/** A scenario that throws is reported as failed; the others still run. */
async function runScenario(name, ctx) {
  log(`scenario ${name} (load average ${os.loadavg()[0].toFixed(2)})`);
  const profile =
    ctx.cfg.profileDir && name !== 'export' ? path.join(ctx.cfg.profileDir, `service-${name}.cpuprofile`) : null;
  try {
    if (profile) startProfile();
    const loadBefore = os.loadavg()[0];
    const out = (await SCENARIOS[name](ctx)).map((row) => ({
      ...row,
      loadAverage: { before: loadBefore, after: os.loadavg()[0] },
    }));
    if (profile) await stopProfile(profile);
    return out;
  } catch (error) {
    log(`scenario ${name} failed: ${error.stack || error.message}`);
    return [{ id: name, title: name, available: `failed: ${error.message}` }];
  }
}

/** BENCH_PROFILE: the preloaded profiler (bench/lib/cpu-profile-preload.js) starts and stops on a flag file. */
function startProfile() {
  const current = path.join(state.cfg.profileDir, 'current.cpuprofile');
  fs.mkdirSync(state.cfg.profileDir, { recursive: true });
  fs.rmSync(current, { force: true });
  fs.writeFileSync(`${current}.start`, '');
}

async function stopProfile(file) {
  const current = path.join(state.cfg.profileDir, 'current.cpuprofile');
  fs.writeFileSync(`${current}.stop`, '');
  for (let i = 0; i < 100 && !fs.existsSync(current); i++) await new Promise((resolve) => setTimeout(resolve, 100));
  await new Promise((resolve) => setTimeout(resolve, 500));
  if (!fs.existsSync(current)) return log(`no profile written to ${current}`);
  fs.renameSync(current, file);
  const { summarize } = require('./profile-summary');
  const summary = file.replace(/\.cpuprofile$/, '.txt');
  fs.writeFileSync(summary, `${summarize(JSON.parse(fs.readFileSync(file, 'utf8')), 40)}\n`);
  log(`service CPU profile: ${file} (summary: ${summary})`);
}

main()
  .then(() => cleanup())
  .catch(async (error) => {
    console.error(`bench failed: ${error.stack || error.message}`);
    if (state.tmpDir) console.error(tail(path.join(state.tmpDir, 'service.log')));
    await cleanup();
    process.exitCode = 1;
  });
