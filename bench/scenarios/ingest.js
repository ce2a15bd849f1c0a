'use strict';

const path = require('node:path');
const { monotonicFactory } = require('ulid');
const { connectClients, withClient } = require('../lib/database');
const { ulidToUuid } = require('../lib/ids');
const { loopLoad } = require('../lib/load');
const { freePort, startNode, waitUntilReady, stopChild } = require('../lib/processes');
const { compareRuns, eventBody, quietBaseline, quietContender, serviceLoad } = require('./common');

/**
 * The design the issue measured and wants beaten: one transaction per event, the chain head
 * locked with SELECT … FOR UPDATE until COMMIT (so through the WAL flush), the hash computed by
 * the built hashing lib. `chainId` is the chain's id (`chn_…`, hashed as such); the ids are bound as
 * the columns store them, ulidToUuid of each (as the service's append converts them), the account's
 * converted once per client (withClients).
 */
function rawAppender(hashing) {
  const nextId = monotonicFactory();
  return async function appendOne(client, chainId, body) {
    const storedChainId = ulidToUuid(chainId);
    await client.query('BEGIN');
    try {
      const { rows } = await client.query(
        `SELECT last_position, encode(last_hash, 'hex') AS last_hash, last_timestamp FROM chains WHERE id = $1 FOR UPDATE`,
        [storedChainId],
      );
      const head = rows[0];
      const time = Math.max(Date.now(), head.last_timestamp ? head.last_timestamp.getTime() : 0);
      const event = {
        id: `evt_${nextId()}`,
        chainId,
        position: Number(head.last_position) + 1,
        actor: body.actor,
        action: body.action,
        resource: body.resource,
        context: body.context,
        timestamp: new Date(time).toISOString(),
        previousHash: head.last_hash,
      };
      const hash = hashing.computeEventHash(event);
      await client.query(
        `INSERT INTO events (id, account_id, chain_id, position, actor, action, resource, context, "timestamp", previous_hash, hash)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, decode($10, 'hex'), decode($11, 'hex'))`,
        [
          ulidToUuid(event.id),
          client.benchAccountUuid,
          storedChainId,
          event.position,
          event.actor,
          event.action,
          event.resource,
          JSON.stringify(event.context),
          event.timestamp,
          event.previousHash,
          hash,
        ],
      );
      await client.query(
        `UPDATE chains SET last_position = $2, last_hash = decode($3, 'hex'), last_timestamp = $4 WHERE id = $1`,
        [storedChainId, event.position, hash, event.timestamp],
      );
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  };
}

/**
 * Chains for the raw-pg baseline, made in the database; their ids (`chn_…`) are returned and remembered
 * in ctx.rawPgChains (they get no Merkle nodes).
 */
async function createChains(ctx, names) {
  const nextId = monotonicFactory();
  const ids = names.map(() => `chn_${nextId()}`);
  await ctx.db.query(
    `INSERT INTO chains (id, account_id, name) SELECT id, $2::uuid, name FROM unnest($1::uuid[], $3::varchar[]) AS c(id, name)`,
    [ids.map((id) => ulidToUuid(id)), ulidToUuid(ctx.accounts.ingest), names],
  );
  ctx.rawPgChains.push(...ids);
  return ids;
}

/** Every event of an account (`acc_…`) links to its predecessor: positions contiguous, hashes chained. */
async function brokenLinks(db, accountId) {
  const { rows } = await db.query(
    `SELECT count(*)::int AS events,
            count(*) FILTER (WHERE e.position > 1 AND (p.hash IS NULL OR p.hash <> e.previous_hash))::int AS broken
       FROM events e LEFT JOIN events p ON p.chain_id = e.chain_id AND p.position = e.position - 1
      WHERE e.account_id = $1`,
    [ulidToUuid(accountId)],
  );
  return rows[0];
}

const NO_TREE_TITLE = 'same service without the Merkle tree (bench/lib/without-merkle-tree.js)';

/**
 * After an ingest or batch scenario: the links of every event of the ingest account in both
 * databases, and proof that the comparison compared what it says. In the measured service's
 * database every chain it wrote has one node of the lowest stored level per 2^level of its events
 * (the levels below are not stored; one statement, so one snapshot of heads and nodes); the
 * no-tree service's chains have no Merkle node at all (its database holds the same seeded trees as
 * the other). Either failing throws: the scenario is reported as failed rather than with a ratio
 * that means nothing.
 */
async function integrity(ctx) {
  const { LOWEST_STORED_LEVEL } = require(ctx.cfg.hashingLib);
  const links = await brokenLinks(ctx.db, ctx.accounts.ingest);
  const { rows } = await ctx.db.query(
    `SELECT coalesce(sum(c.last_position), 0)::int AS events, coalesce(sum(c.last_position / (1 << $3::int)), 0)::int AS spans,
            (SELECT count(*) FROM merkle_nodes m
              WHERE m.level = $3::int AND m.chain_id IN (SELECT id FROM chains
                                                    WHERE account_id = $1 AND NOT (id = ANY($2::uuid[]))))::int AS parents
       FROM chains c
      WHERE c.account_id = $1 AND NOT (c.id = ANY($2::uuid[]))`,
    [ulidToUuid(ctx.accounts.ingest), ctx.rawPgChains.map((id) => ulidToUuid(id)), LOWEST_STORED_LEVEL],
  );
  const tree = rows[0];
  const noTree = await withClient(ctx.noTree.benchUrl, async (client) => ({
    ...(await brokenLinks(client, ctx.noTree.accounts.ingest)),
    nodes: (
      await client.query(
        'SELECT count(*)::int AS n FROM merkle_nodes WHERE chain_id IN (SELECT id FROM chains WHERE account_id = $1)',
        [ulidToUuid(ctx.noTree.accounts.ingest)],
      )
    ).rows[0].n,
  }));
  if (tree.events === 0 || tree.parents !== tree.spans) {
    throw new Error(
      `the measured service wrote ${tree.events} events (room for ${tree.spans} nodes of level ${LOWEST_STORED_LEVEL} in their chains) but ${tree.parents} such Merkle nodes: its tree was not (fully) written`,
    );
  }
  if (noTree.nodes !== 0) {
    throw new Error(`the no-tree service's chains hold ${noTree.nodes} Merkle nodes: the tree was not switched off`);
  }
  return {
    notes: [
      `integrity after the run: ${links.broken} broken links in ${links.events.toLocaleString('en-US')} events of the ingest account`,
      `Merkle tree: ${tree.parents.toLocaleString('en-US')} level-${LOWEST_STORED_LEVEL} nodes for the ${tree.events.toLocaleString('en-US')} events the service appended (raw-pg chains excluded); no-tree service: ${noTree.broken} broken links in ${noTree.events.toLocaleString('en-US')} events, ${noTree.nodes} Merkle nodes`,
    ],
    integrity: { ...links, tree, noTree },
  };
}

/** `contender(ctx)` pointed at the service without the Merkle tree, keyed `noTree`. */
function noTreeContender(ctx, contender) {
  if (!ctx.noTree) throw new Error('the service without the Merkle tree was not started');
  return { ...contender({ ...ctx, serviceUrl: ctx.noTree.serviceUrl }), key: 'noTree' };
}

/** The baseline row of the `noTree` contender: the tree may cost at most 10 % (issue 12). */
function noTreeBaseline(result) {
  return { key: 'noTree', title: NO_TREE_TITLE, summary: result.noTree, target: { minRatio: 0.9 } };
}

function serviceContender(ctx, connections, chainOf) {
  let k = 0;
  return {
    key: 'service',
    run: (seconds) =>
      serviceLoad(ctx, connections, seconds, () => {
        const n = k++;
        return { method: 'POST', path: '/v1/events', body: JSON.stringify(eventBody(n, chainOf(n))) };
      }),
  };
}

function rawPgContender(ctx, clients, chainIds) {
  const appendOne = rawAppender(ctx.hashing);
  let k = 0;
  return {
    key: 'rawPg',
    run: (seconds) =>
      loopLoad({
        loops: clients.length,
        seconds,
        op: (i) => {
          const n = k++;
          return appendOne(clients[i], chainIds[n % chainIds.length], eventBody(n, null));
        },
      }),
  };
}

async function withClients(ctx, n, fn) {
  const clients = await connectClients(ctx.benchUrl, n);
  // The account as events.account_id stores it (a uuid's text), bound by every raw-pg append.
  const accountUuid = ulidToUuid(ctx.accounts.ingest);
  for (const c of clients) c.benchAccountUuid = accountUuid;
  try {
    return await fn(clients);
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  }
}

/** Scenario 1: 64 connections, request i on chain c<i % 64>. */
async function ingestSpread(ctx) {
  const { cfg } = ctx;
  const n = cfg.ingestConnections;
  const chains = 64;
  const pgChains = await createChains(
    ctx,
    Array.from({ length: chains }, (_, i) => `pg-c${i}`),
  );
  const port = await freePort();
  const logFile = path.join(ctx.tmpDir, 'bare-http.log');
  const bare = startNode(path.join(__dirname, '..', 'bare-http-server.js'), {
    env: { ...process.env, PORT: String(port) },
    logFile,
  });
  const window = ctx.sampler.open();
  try {
    await waitUntilReady(bare, `http://127.0.0.1:${port}/health/ready`, { logFile });
    ctx.cpu.track('bareHttp', bare.pid);
    const result = await withClients(ctx, n, (clients) =>
      compareRuns({
        ctx,
        label: 'ingest 64 chains',
        contenders: [
          serviceContender(ctx, n, (k) => `c${k % chains}`),
          noTreeContender(ctx, (c) => serviceContender(c, n, (k) => `c${k % chains}`)),
          quietContender(ctx, (c) => serviceContender(c, n, (k) => `c${k % chains}`)),
          {
            ...serviceContender({ ...ctx, serviceUrl: `http://127.0.0.1:${port}` }, n, (k) => `c${k % chains}`),
            key: 'bareHttp',
          },
          rawPgContender(ctx, clients, pgChains),
        ],
      }),
    );
    const { notes, integrity: checked } = await integrity(ctx);
    return [
      {
        id: 'ingest-spread',
        title: `ingest, ${n} connections over ${chains} chains`,
        unit: 'events/s',
        service: result.service,
        serverPeakRss: window.close().peak,
        baselines: [
          {
            key: 'rawPg',
            title: `raw pg, 1 tx/event, ${n} clients, ${chains} chains`,
            summary: result.rawPg,
            target: { minRatio: 1.0 },
          },
          noTreeBaseline(result),
          quietBaseline(result),
          { key: 'bareHttp', title: 'bare node:http, constant JSON', summary: result.bareHttp, target: null },
        ],
        notes,
        integrity: checked,
      },
    ];
  } finally {
    ctx.cpu.untrack('bareHttp');
    await stopChild(bare);
  }
}

/** Scenario 2: 64 connections, all on one chain. */
async function ingestHot(ctx) {
  const { cfg } = ctx;
  const n = cfg.ingestConnections;
  const [pgHot] = await createChains(ctx, ['pg-hot']);
  const window = ctx.sampler.open();
  const result = await withClients(ctx, n, (clients) =>
    compareRuns({
      ctx,
      label: 'ingest 1 chain',
      contenders: [
        serviceContender(ctx, n, () => 'hot'),
        noTreeContender(ctx, (c) => serviceContender(c, n, () => 'hot')),
        quietContender(ctx, (c) => serviceContender(c, n, () => 'hot')),
        rawPgContender(ctx, clients, [pgHot]),
      ],
    }),
  );
  const { notes, integrity: checked } = await integrity(ctx);
  return [
    {
      id: 'ingest-hot',
      title: `ingest, ${n} connections on ONE chain`,
      unit: 'events/s',
      service: result.service,
      serverPeakRss: window.close().peak,
      baselines: [
        {
          key: 'rawPg',
          title: `raw pg, 1 tx/event, ${n} clients, 1 chain`,
          summary: result.rawPg,
          target: { minRatio: 3.0 },
        },
        noTreeBaseline(result),
        quietBaseline(result),
      ],
      checks: [{ label: 'p99 at 64 connections', value: result.service.p99, unit: 'ms', max: 50 }],
      notes,
      integrity: checked,
    },
  ];
}

module.exports = {
  ingestSpread,
  ingestHot,
  createChains,
  integrity,
  noTreeBaseline,
  noTreeContender,
  rawPgContender,
  withClients,
};
