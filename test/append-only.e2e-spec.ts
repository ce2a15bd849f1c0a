import { ulid } from 'ulid';
import { computeEventHash, eventLeafHash, extendTree, LOWEST_STORED_LEVEL } from '@app/hashing';
import { assertChainIntact } from './support/chain-check';
import { attemptSql, Sql } from './support/raw-sql';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/** The triggers of migration 1763800000000, exercised with plain SQL as the service's own role would. */
describe('append-only schema', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (chain: string, i: number) =>
    t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .send({ actor: `user_${i}`, action: 'doc.update', chain });

  async function chainOf(
    name: string,
    count: number,
  ): Promise<{ id: string; accountId: string; events: { id: string; hash: string; timestamp: string }[] }> {
    const events: { id: string; hash: string; timestamp: string; chain: { id: string } }[] = [];
    for (let i = 1; i <= count; i++) events.push((await post(name, i).expect(201)).body.data);
    const [{ account_id: accountId }] = await t.dataSource.query<[{ account_id: string }]>(
      `SELECT audit_uuid_ulid('acc', account_id) AS account_id FROM chains WHERE id = audit_ulid_uuid($1)`,
      [events[0]!.chain.id],
    );
    return { id: events[0]!.chain.id, accountId, events };
  }

  const attempt = (work: (m: Sql) => Promise<unknown>) => attemptSql(t.dataSource, work);

  const head = async (chainId: string) =>
    (
      await t.dataSource.query<{ position: number; hash: string }[]>(
        `SELECT last_position::int AS position, encode(last_hash, 'hex') AS hash FROM chains WHERE id = audit_ulid_uuid($1)`,
        [chainId],
      )
    )[0]!;

  /** Inserts the event that would come next after `previous` (an honest event, written in SQL). */
  async function insertNext(
    m: Sql,
    chain: { id: string; accountId: string },
    position: number,
    previousHash: string,
    timestamp: string = new Date().toISOString(),
  ): Promise<{ hash: string; timestamp: string }> {
    const event = {
      id: `evt_${ulid()}`,
      chainId: chain.id,
      position,
      actor: 'sql',
      action: 'row.insert',
      resource: null,
      context: null,
      timestamp,
      previousHash,
    };
    const hash = computeEventHash(event);
    await m.query(
      `INSERT INTO events (id, account_id, chain_id, position, actor, action, resource, context, "timestamp", previous_hash, hash)
       VALUES (audit_ulid_uuid($1), audit_ulid_uuid($2), audit_ulid_uuid($3), $4, $5, $6, NULL, NULL, $7, decode($8, 'hex'), decode($9, 'hex'))`,
      [event.id, chain.accountId, chain.id, position, event.actor, event.action, event.timestamp, previousHash, hash],
    );
    return { hash, timestamp: event.timestamp };
  }

  describe('events', () => {
    it.each([
      ['UPDATE', `UPDATE events SET actor = 'mallory' WHERE chain_id = audit_ulid_uuid($1)`],
      ['DELETE', `DELETE FROM events WHERE chain_id = audit_ulid_uuid($1)`],
      [
        'UPDATE of no row at all',
        `UPDATE events SET actor = 'mallory' WHERE chain_id = audit_ulid_uuid($1) AND position < 0`,
      ],
    ])('rejects %s', async (_label, sql) => {
      const chain = await chainOf(`ao-events-${_label.length}`, 2);
      const error = await attempt((m) => m.query(sql, [chain.id]));
      expect(error).toMatchObject({
        code: '42501',
        message: expect.stringMatching(/on events is not allowed: the audit trail is append-only/),
      });
      await assertChainIntact(t.dataSource, chain.id);
    });

    it('rejects TRUNCATE, also through a cascade from chains', async () => {
      const chain = await chainOf('ao-truncate', 1);
      for (const sql of ['TRUNCATE events', 'TRUNCATE chains CASCADE', 'TRUNCATE checkpoints']) {
        expect(await attempt((m) => m.query(sql))).toMatchObject({
          code: '42501',
          message: expect.stringMatching(/TRUNCATE on \w+ is not allowed/),
        });
      }
      await assertChainIntact(t.dataSource, chain.id);
    });
  });

  describe('checkpoints', () => {
    it('rejects UPDATE and DELETE of stored checkpoints', async () => {
      const chain = await chainOf('ao-checkpoints', 1);
      const note = (
        await t
          .http()
          .get(`/v1/chain/${chain.id}/checkpoint`)
          .set(...bearer(KEYS.acme))
          .expect(200)
      ).text;
      for (const sql of [
        `UPDATE checkpoints SET note = 'x' WHERE chain_id = audit_ulid_uuid($1)`,
        `DELETE FROM checkpoints WHERE chain_id = audit_ulid_uuid($1)`,
      ]) {
        expect(await attempt((m) => m.query(sql, [chain.id]))).toMatchObject({ code: '42501' });
      }
      expect(
        await t.dataSource.query(`SELECT note FROM checkpoints WHERE chain_id = audit_ulid_uuid($1)`, [chain.id]),
      ).toEqual([{ note }]);
    });
  });

  describe('chains', () => {
    it('rejects deleting a chain', async () => {
      const chain = await chainOf('ao-chain-delete', 1);
      expect(
        await attempt((m) => m.query(`DELETE FROM chains WHERE id = audit_ulid_uuid($1)`, [chain.id])),
      ).toMatchObject({
        code: '42501',
      });
    });

    it('lets the head move forward by exactly the events appended in the same transaction', async () => {
      const chain = await chainOf('ao-forward', 2);
      const before = await head(chain.id);
      const error = await attempt(async (m) => {
        const third = await insertNext(m, chain, 3, before.hash);
        const fourth = await insertNext(m, chain, 4, third.hash);
        // An appender outside the service grows the chain's Merkle tree too (docs/contract.md §10), as ChainTrees does.
        // The frontier at size 2, the node (1, 0), is not stored: it is derived from the first two events.
        const { rows: firstTwo } = (await m.query(
          `SELECT encode(hash, 'hex') AS hash FROM events WHERE chain_id = audit_ulid_uuid($1) AND position <= 2 ORDER BY position`,
          [chain.id],
        )) as { rows: { hash: string }[] };
        const { frontier } = extendTree(
          0,
          [],
          firstTwo.map((e) => eventLeafHash(e.hash)),
        );
        const { nodes } = extendTree(2, frontier, [eventLeafHash(third.hash), eventLeafHash(fourth.hash)]);
        // Levels below LOWEST_STORED_LEVEL are not stored: the database derives them from the events.
        for (const n of nodes.filter(({ level }) => level >= LOWEST_STORED_LEVEL))
          await m.query(
            `INSERT INTO merkle_nodes (chain_id, level, "index", hash) VALUES (audit_ulid_uuid($1), $2, $3, $4)`,
            [chain.id, n.level, n.index, n.hash],
          );
        await m.query(
          `UPDATE chains SET last_position = 4, last_hash = decode($1, 'hex'), last_timestamp = $2 WHERE id = audit_ulid_uuid($3)`,
          [fourth.hash, fourth.timestamp, chain.id],
        );
      });
      expect(error).toBeNull();
      expect(await head(chain.id)).toMatchObject({ position: 4 });
      await assertChainIntact(t.dataSource, chain.id);
      await post('ao-forward', 5).expect(201);
      expect(await assertChainIntact(t.dataSource, chain.id)).toBe(5);
    });

    it('rejects moving the head backwards', async () => {
      const chain = await chainOf('ao-backwards', 3);
      const error = await attempt((m) =>
        m.query(`UPDATE chains SET last_position = 2, last_hash = decode($1, 'hex') WHERE id = audit_ulid_uuid($2)`, [
          chain.events[1]!.hash,
          chain.id,
        ]),
      );
      expect(error).toMatchObject({
        code: '23514',
        message: expect.stringMatching(/cannot move from position 3 to 2/),
      });
      expect(await head(chain.id)).toEqual({ position: 3, hash: chain.events[2]!.hash });
    });

    it('rejects a head that jumps past the events appended', async () => {
      const chain = await chainOf('ao-jump', 2);
      const error = await attempt(async (m) => {
        const third = await insertNext(m, chain, 3, chain.events[1]!.hash);
        await m.query(
          `UPDATE chains SET last_position = 4, last_hash = decode($1, 'hex'), last_timestamp = $2 WHERE id = audit_ulid_uuid($3)`,
          [third.hash, third.timestamp, chain.id],
        );
      });
      expect(error).toMatchObject({
        code: '23514',
        message: expect.stringMatching(/move forward by exactly the 1 event\(s\) appended, not to position 4/),
      });
      expect(await assertChainIntact(t.dataSource, chain.id)).toBe(2);
    });

    it('rejects a head that stops short of the events appended, or skips a position', async () => {
      const chain = await chainOf('ao-short', 1);
      const short = await attempt(async (m) => {
        const second = await insertNext(m, chain, 2, chain.events[0]!.hash);
        await insertNext(m, chain, 3, second.hash);
        await m.query(
          `UPDATE chains SET last_position = 2, last_hash = decode($1, 'hex'), last_timestamp = $2 WHERE id = audit_ulid_uuid($3)`,
          [second.hash, second.timestamp, chain.id],
        );
      });
      expect(short).toMatchObject({ code: '23514' });
      const gap = await attempt(async (m) => {
        const third = await insertNext(m, chain, 3, chain.events[0]!.hash);
        await m.query(
          `UPDATE chains SET last_position = 3, last_hash = decode($1, 'hex'), last_timestamp = $2 WHERE id = audit_ulid_uuid($3)`,
          [third.hash, third.timestamp, chain.id],
        );
      });
      expect(gap).toMatchObject({ code: '23514' });
      expect(await assertChainIntact(t.dataSource, chain.id)).toBe(1);
    });

    it('rejects a head whose hash or time is not the new last event, or whose first new event does not link to it', async () => {
      const chain = await chainOf('ao-hash', 1);
      const wrongHash = await attempt(async (m) => {
        const second = await insertNext(m, chain, 2, chain.events[0]!.hash);
        await m.query(
          `UPDATE chains SET last_position = 2, last_hash = decode($1, 'hex'), last_timestamp = $2 WHERE id = audit_ulid_uuid($3)`,
          ['f'.repeat(64), second.timestamp, chain.id],
        );
      });
      expect(wrongHash).toMatchObject({
        code: '23514',
        message: expect.stringMatching(/hash and time of the event at position 2/),
      });
      const wrongTime = await attempt(async (m) => {
        const second = await insertNext(m, chain, 2, chain.events[0]!.hash);
        await m.query(
          `UPDATE chains SET last_position = 2, last_hash = decode($1, 'hex'), last_timestamp = $2 WHERE id = audit_ulid_uuid($3)`,
          [second.hash, '2099-01-01T00:00:00.000Z', chain.id],
        );
      });
      expect(wrongTime).toMatchObject({ code: '23514' });
      const unlinked = await attempt(async (m) => {
        const second = await insertNext(m, chain, 2, 'a'.repeat(64));
        await m.query(
          `UPDATE chains SET last_position = 2, last_hash = decode($1, 'hex'), last_timestamp = $2 WHERE id = audit_ulid_uuid($3)`,
          [second.hash, second.timestamp, chain.id],
        );
      });
      expect(unlinked).toMatchObject({ code: '23514' });
      const sameSizeOtherHash = await attempt((m) =>
        m.query(`UPDATE chains SET last_hash = decode($1, 'hex') WHERE id = audit_ulid_uuid($2)`, [
          'f'.repeat(64),
          chain.id,
        ]),
      );
      expect(sameSizeOtherHash).toMatchObject({ code: '23514' });
      expect(await assertChainIntact(t.dataSource, chain.id)).toBe(1);
    });

    it("rejects changing a chain's identity, and a new chain that does not start empty", async () => {
      const chain = await chainOf('ao-identity', 1);
      for (const sql of [
        `UPDATE chains SET name = 'renamed' WHERE id = audit_ulid_uuid($1)`,
        `UPDATE chains SET account_id = (SELECT id FROM accounts WHERE name = 'globex') WHERE id = audit_ulid_uuid($1)`,
      ]) {
        expect(await attempt((m) => m.query(sql, [chain.id]))).toMatchObject({
          code: '23514',
          message: expect.stringMatching(/never change/),
        });
      }
      const forged = await attempt((m) =>
        m.query(
          `INSERT INTO chains (id, account_id, name, last_position, last_hash) VALUES (audit_ulid_uuid($1), audit_ulid_uuid($2), 'forged', 5, decode($3, 'hex'))`,
          [`chn_${ulid()}`, chain.accountId, 'a'.repeat(64)],
        ),
      );
      expect(forged).toMatchObject({ code: '23514', message: expect.stringMatching(/starts at position 0/) });
      expect(
        await attempt((m) => m.query(`UPDATE chains SET name = name WHERE id = audit_ulid_uuid($1)`, [chain.id])),
      ).toBeNull();
    });
  });

  describe('time order (migration 1764000000000)', () => {
    /** The next event of `chain` with `timestamp`, correctly linked and hashed, and the head moved to it. */
    const appendAt = (chain: { id: string; accountId: string; events: { hash: string }[] }, timestamp: string) =>
      attempt(async (m) => {
        const position = chain.events.length + 1;
        const next = await insertNext(m, chain, position, chain.events[position - 2]!.hash, timestamp);
        await m.query(
          `UPDATE chains SET last_position = $1, last_hash = decode($2, 'hex'), last_timestamp = $3 WHERE id = audit_ulid_uuid($4)`,
          [position, next.hash, next.timestamp, chain.id],
        );
      });

    it('refuses an event earlier than the one before it (a forged 2020 append)', async () => {
      const chain = await chainOf('ao-time-past', 2);
      expect(await appendAt(chain, '2020-01-01T00:00:00.000Z')).toMatchObject({
        code: '23514',
        message: expect.stringMatching(
          /timestamp 2020-01-01T00:00:00.000Z is earlier than .*Z, the timestamp of position 2 of its chain/,
        ),
      });
      expect(await assertChainIntact(t.dataSource, chain.id)).toBe(2);
      const head = (await post('ao-time-past', 3).expect(201)).body.data;
      expect(head.timestamp >= chain.events[1]!.timestamp).toBe(true);
    });

    it('refuses an event later than the database clock allows (a forged 2099 append), and so keeps later events in the present', async () => {
      const chain = await chainOf('ao-time-future', 1);
      expect(await appendAt(chain, '2099-01-01T00:00:00.000Z')).toMatchObject({
        code: '23514',
        message: expect.stringMatching(/timestamp 2099-01-01T00:00:00.000Z is later than the database clock allows/),
      });
      expect(await assertChainIntact(t.dataSource, chain.id)).toBe(1);
      const next = (await post('ao-time-future', 2).expect(201)).body.data;
      expect(next.timestamp.startsWith('2099')).toBe(false);
    });

    it('accepts an event at the same time as the one before it, and one within the clock skew', async () => {
      const chain = await chainOf('ao-time-equal', 1);
      expect(await appendAt(chain, chain.events[0]!.timestamp)).toBeNull();
      const events = await t.dataSource.query<{ hash: string }[]>(
        `SELECT encode(hash, 'hex') AS hash FROM events WHERE chain_id = audit_ulid_uuid($1) ORDER BY position`,
        [chain.id],
      );
      expect(await appendAt({ ...chain, events }, new Date(Date.now() + 1000).toISOString())).toBeNull();
      expect(await assertChainIntact(t.dataSource, chain.id)).toBe(3);
    });
  });

  it('keeps the append path working: concurrent appends to several chains stay intact', async () => {
    const names = ['ao-load-a', 'ao-load-b', 'ao-load-c'];
    await Promise.all(names.flatMap((name) => Array.from({ length: 40 }, (_, i) => post(name, i).expect(201))));
    const chains = await t.dataSource.query<
      {
        id: string;
      }[]
    >(`SELECT audit_uuid_ulid('chn', id) AS id FROM chains WHERE name = ANY($1)`, [names]);
    for (const { id } of chains) expect(await assertChainIntact(t.dataSource, id)).toBe(40);
  });

  it('names every trigger it installs', async () => {
    const rows = await t.dataSource.query<{ tgname: string }[]>(
      `SELECT tgname FROM pg_trigger WHERE NOT tgisinternal AND tgrelid IN ('events'::regclass, 'chains'::regclass, 'checkpoints'::regclass) ORDER BY tgname`,
    );
    expect(rows.map((r) => r.tgname)).toEqual([
      'trg_chains_head_forward',
      'trg_chains_prune_policy',
      'trg_chains_reject_delete',
      'trg_chains_reject_truncate',
      'trg_chains_retention_log', // records settings and prunes in retention_log (migration 1765000000000)
      'trg_chains_start_empty',
      'trg_checkpoints_reject_delete',
      'trg_checkpoints_reject_truncate',
      'trg_checkpoints_reject_update',
      'trg_events_erasure_check',
      'trg_events_erasure_record',
      'trg_events_reject_delete',
      'trg_events_reject_truncate',
      'trg_events_reject_update',
      'trg_events_rollup_delete', // not guards: they keep event_counts (migration 1764900000000)
      'trg_events_rollup_insert',
      'trg_events_time_order',
    ]);
  });
});
