'use strict';

const { monotonicFactory } = require('ulid');
const { copyFrom, copyText } = require('./database');
const { idColumns } = require('./ids');
const { prng } = require('./stats');

const DAY_MS = 86_400_000;
const CHUNK = 10_000;
const ACTORS = 1_000;
const ACTIONS = [
  'user.login',
  'user.logout',
  'document.create',
  'document.read',
  'document.update',
  'document.delete',
  'role.grant',
  'role.revoke',
  'invoice.issue',
  'invoice.pay',
  'key.rotate',
  'export.run',
];

/**
 * Seeds `total` events into `chainCount` chains of one account, as the service would have
 * written them: positions 1..n per chain, each previousHash the predecessor's hash, each hash
 * computed by the built hashing lib, timestamps never going back. Chain 0 (`seed-big`) gets
 * every 10th event, the others share the rest at random. Timestamps are evenly spaced over 30
 * days ending a day ago, so any run of 10,000 consecutive events is an export window of exactly
 * 10,000 events. Written with one COPY inside one transaction; triggers (the append-only ones)
 * are bypassed with SET LOCAL session_replication_role = replica when the role may do so (which
 * also skips the foreign-key checks: the chains are inserted first, so they hold anyway).
 * Each chain's Merkle tree (merkle_nodes, docs/contract.md §10) is written too, by a second COPY in the
 * same transaction, computed with the built hashing lib as the service's append path would have.
 * With `chainCount` 1 every event goes to `seed-big`.
 *
 * `accountId` is the account's id as the API gives it (`acc_…`); the returned chains' ids and
 * `sampleIds` are too (`chn_…`, `evt_…`). Each id column is written in the form the schema stores:
 * a uuid's text where the column is `uuid` (migration 1765900000000), the id itself
 * where it is still varchar (a build from before them: the `builds` scenario, bench/upgrade.js).
 *
 * Options for a second seed into the same database (`hash-versions`): `hashVersion` 1 writes
 * version-1 events into chains of hash_version 1 even where the schema has version 2 (as chains from
 * before migration 1765400000000 are); `names` the chains' names (the default `seed-big`, `seed-0001`…
 * are the first seed's); `prngSeed` another stream of random numbers (the ids must differ).
 */
/** `bytes` from the seeded generator as lowercase hex (a seeded event's salt seed: repeatable, as the rest of the seed). */
function randomHex(random, bytes) {
  let hex = '';
  for (let i = 0; i < bytes; i++)
    hex += Math.floor(random() * 256)
      .toString(16)
      .padStart(2, '0');
  return hex;
}

async function seedEvents(
  client,
  { accountId, total, chainCount, hashing, log, hashVersion = null, names = null, prngSeed = 0x5eed },
) {
  if (typeof accountId !== 'string' || !accountId.startsWith('acc_'))
    throw new Error(`seedEvents: accountId must be the account's id as the API gives it (acc_…), got ${accountId}`);
  // Hashes as the database stores them: 32 bytes since migration 1765300000000, hex text before (the
  // `builds` scenario seeds a build from before it too).
  const {
    rows: [{ binary }],
  } = await client.query(
    `SELECT data_type = 'bytea' AS binary FROM information_schema.columns WHERE table_name = 'events' AND column_name = 'hash'`,
  );
  const storedHash = binary ? (hex) => `\\x${hex}` : (hex) => hex;
  // Version-2 events (salt seed, salted commitments) where the schema has them (migration 1765400000000),
  // as the service writes into its new chains; version 1 on a database of a build from before.
  const {
    rows: [{ hasVersions }],
  } = await client.query(
    `SELECT count(*) > 0 AS "hasVersions" FROM information_schema.columns WHERE table_name = 'events' AND column_name = 'salt_seed'`,
  );
  if (hashVersion !== null && !hasVersions)
    throw new Error('seedEvents: hashVersion given, but the schema has no hash versions');
  const versioned = hasVersions && hashVersion !== 1;
  // Ids as each column stores them: uuid text since migration 1765900000000, the prefixed id
  // (varchar) before.
  const ids = await idColumns(client);
  const storedEventId = ids.stored('events', 'id');
  const eventAccountId = ids.stored('events', 'account_id')(accountId);
  const random = prng(prngSeed);
  const nextId = monotonicFactory(random);
  const stepMs = Math.max(1, Math.floor((30 * DAY_MS) / total));
  const t0 = Math.floor((Date.now() - DAY_MS - stepMs * total) / 1000) * 1000;
  const chains = Array.from({ length: chainCount }, (_, i) => ({
    id: `chn_${nextId(t0 - 60_000)}`,
    name: names ? names[i] : i === 0 ? 'seed-big' : `seed-${String(i).padStart(4, '0')}`,
    position: 0,
    hash: hashing.GENESIS_HASH,
    time: null,
  }));
  /** Each chain's id as a column stores it, by the chain's index. */
  const chainIdsIn = (table, column) => chains.map((c) => ids.stored(table, column)(c.id));
  const eventChainIds = chainIdsIn('events', 'chain_id');
  const nodeChainIds = chainIdsIn('merkle_nodes', 'chain_id');
  const chainRowIds = chainIdsIn('chains', 'id');
  const sampleEvery = Math.max(1, Math.floor(total / 10_000));
  const sampleIds = [];
  /** Per event k: its chain and its hash, for the Merkle trees written after the events. */
  const chainOf = new Uint32Array(total);
  const hashes = Buffer.alloc(total * 32);

  function* chunks() {
    for (let start = 0; start < total; start += CHUNK) {
      const end = Math.min(total, start + CHUNK);
      let text = '';
      for (let k = start; k < end; k++) {
        const c = chainCount === 1 || k % 10 === 0 ? 0 : 1 + Math.floor(random() * (chainCount - 1));
        const chain = chains[c];
        chainOf[k] = c;
        const time = t0 + k * stepMs;
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
        const event = {
          id: `evt_${nextId(time)}`,
          chainId: chain.id,
          position: chain.position + 1,
          actor: `user_${Math.floor(random() * ACTORS)}`,
          action: ACTIONS[Math.floor(random() * ACTIONS.length)],
          resource,
          context,
          timestamp: new Date(time).toISOString(),
          previousHash: chain.hash,
        };
        const saltSeed = versioned ? randomHex(random, 16) : null;
        const hash = versioned
          ? hashing.computeEventHashV2(event, {
              version: 2,
              salts: hashing.deriveSalts(saltSeed, event),
              commitments: {},
            })
          : hashing.computeEventHash(event);
        hashes.write(hash, k * 32, 'hex');
        chain.position = event.position;
        chain.hash = hash;
        chain.time = time;
        if (k % sampleEvery === 0) sampleIds.push(event.id);
        text +=
          [
            storedEventId(event.id),
            eventAccountId,
            eventChainIds[c],
            event.position,
            event.actor,
            event.action,
            event.resource,
            context === null ? null : JSON.stringify(context),
            event.timestamp,
            // bytea in COPY text: \x and the hex (copyText doubles the backslash).
            storedHash(event.previousHash),
            storedHash(hash),
            ...(versioned ? [storedHash(saltSeed)] : []),
          ]
            .map(copyText)
            .join('\t') + '\n';
      }
      if (start % 100_000 === 0 && log)
        log(`  seeding: ${start.toLocaleString('en-US')} / ${total.toLocaleString('en-US')}`);
      yield Buffer.from(text, 'utf8');
    }
  }

  /**
   * Every chain's perfect subtrees from the lowest stored level up (the service derives those below
   * from the events; hashing.LOWEST_STORED_LEVEL), leaf by leaf in event order (children before
   * parents), as COPY text.
   */
  function* treeChunks() {
    const stacks = chains.map(() => []);
    const sizes = new Uint32Array(chainCount);
    const row = (chainId, level, index, hash) => `${chainId}\t${level}\t${index}\t\\\\x${hash.toString('hex')}\n`;
    let text = '';
    for (let k = 0; k < total; k++) {
      const c = chainOf[k];
      const stack = stacks[c];
      let node = { level: 0, index: sizes[c]++, hash: hashing.leafHash(hashes.subarray(k * 32, k * 32 + 32)) };
      while (stack.length > 0 && stack[stack.length - 1].level === node.level) {
        const left = stack.pop();
        node = { level: node.level + 1, index: left.index / 2, hash: hashing.nodeHash(left.hash, node.hash) };
        if (node.level >= hashing.LOWEST_STORED_LEVEL) text += row(nodeChainIds[c], node.level, node.index, node.hash);
      }
      stack.push(node);
      if (text.length > 1_000_000) {
        yield Buffer.from(text, 'utf8');
        text = '';
      }
    }
    if (text.length > 0) yield Buffer.from(text, 'utf8');
  }

  const started = process.hrtime.bigint();
  let copySeconds = null;
  let rebuilt = [];
  await client.query('BEGIN');
  try {
    const { rows } = await client.query('SELECT rolsuper FROM pg_roles WHERE rolname = current_user');
    if (rows[0] && rows[0].rolsuper) await client.query('SET LOCAL session_replication_role = replica');
    await client.query(
      // (hash_version: the column's default, 2 where it exists, unless hashVersion says otherwise.)
      `INSERT INTO chains (id, account_id, name, created_at${hashVersion === null ? '' : ', hash_version'})
       SELECT id, $2::${ids.type('chains', 'account_id')}, name, $3${hashVersion === null ? '' : `, ${Number(hashVersion)}`}
         FROM unnest($1::${ids.type('chains', 'id')}[], $4::varchar[]) AS c(id, name)`,
      [chainRowIds, ids.stored('chains', 'account_id')(accountId), new Date(t0 - 60_000), chains.map((c) => c.name)],
    );
    // Secondary indexes are dropped and rebuilt from their own definitions: one sort per index
    // instead of a million random inserts into each (what keeps COPY slow with 128 MB of
    // shared_buffers). Constraint indexes (primary key, unique position) stay and check the rows.
    const { rows: indexes } = await client.query(
      `SELECT i.relname AS name, pg_get_indexdef(i.oid) AS definition
         FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
        WHERE x.indrelid = 'events'::regclass AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = i.oid)`,
    );
    for (const index of indexes) await client.query(`DROP INDEX "${index.name}"`);
    const copied = await copyFrom(
      client,
      `COPY events (id, account_id, chain_id, position, actor, action, resource, context, "timestamp", previous_hash, hash${versioned ? ', salt_seed' : ''}) FROM STDIN`,
      chunks(),
    );
    if (copied !== total) throw new Error(`COPY wrote ${copied} rows, expected ${total}`);
    copySeconds = Number(process.hrtime.bigint() - started) / 1e9;
    const nodes = await copyFrom(client, 'COPY merkle_nodes (chain_id, level, "index", hash) FROM STDIN', treeChunks());
    if (nodes >= 2 * total) throw new Error(`COPY wrote ${nodes} Merkle nodes for ${total} events`);
    await client.query(`SET LOCAL maintenance_work_mem = '256MB'`);
    for (const index of indexes) await client.query(index.definition);
    rebuilt = indexes.map((i) => i.name);
    await client.query(
      `UPDATE chains SET last_position = h.position, last_hash = ${binary ? `decode(h.hash, 'hex')` : 'h.hash'}, last_timestamp = h.ts
         FROM unnest($1::${ids.type('chains', 'id')}[], $2::int8[], $3::text[], $4::timestamptz[]) AS h(id, position, hash, ts)
        WHERE chains.id = h.id`,
      [
        chainRowIds,
        chains.map((c) => c.position),
        chains.map((c) => c.hash),
        chains.map((c) => (c.time === null ? null : new Date(c.time).toISOString())),
      ],
    );
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return {
    seconds,
    rate: total / seconds,
    copySeconds,
    rebuiltIndexes: rebuilt,
    chains,
    sampleIds,
    actors: Array.from({ length: ACTORS }, (_, i) => `user_${i}`),
    /** Timestamp of the k-th seeded event (0-based). */
    timeOf: (k) => new Date(t0 + k * stepMs).toISOString(),
    total,
    stepMs,
  };
}

module.exports = { seedEvents };
