import { EventCounts1764900000000 } from '../libs/database/src/migrations/1764900000000-event-counts';
import { adminBootstrapKeys, ADMIN_KEYS } from './support/admin-keys';
import { attemptSql } from './support/raw-sql';
import { bearer, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';
import { BinaryIds1765900000000 } from '@app/database/migrations/1765900000000-binary-ids';
import { ActionSchemas1766200000000 } from '@app/database/migrations/1766200000000-action-schemas';

/**
 * The rollup `event_counts` (migration 1764900000000) against the events it counts: the table
 * itself against a GROUP BY over `events` after synthetic rows, appends (several chains at once), a
 * retention prune and refused deletes; GET /v1/stats/events, which reads it for whole UTC days,
 * against a GROUP BY done here, with periods whose edges fall inside days and hours and across UTC
 * days; and a tampered rollup row that changes the answer of an eligible query only (the rollup
 * is really read).
 */
type Row = { action: string; chain_id: string; chain_name: string; timestamp: Date };
type Bucket = { key: string | null; count: number };

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const BASE = Date.parse('2026-03-01T20:00:00.000Z');
const ACTIONS = ['order.created', 'order.paid', 'user.login', 'user.logout'];

describe('Statistics from the event_counts rollup', () => {
  let t: TestApp;
  const chains: Record<string, string> = {};
  let acmeId: string;

  const req = () => t.http();
  const stats = async (query: Record<string, string>, key: string = KEYS.acme) =>
    (
      await req()
        .get('/v1/stats/events')
        .query(query)
        .set(...bearer(key))
        .expect(200)
    ).body as { data: Bucket[]; total: number };

  const append = (chain: string, count: number, key: string = KEYS.acme, offset = 0) =>
    req()
      .post('/v1/events/batch')
      .set(...bearer(key))
      .send({
        events: Array.from({ length: count }, (_, i) => ({
          actor: 'alice',
          action: ACTIONS[(offset + i) % ACTIONS.length],
          chain,
        })),
      })
      .expect(201);

  /** The rollup as stored, and as a GROUP BY over the events says it should be. */
  async function rollupAndTruth(): Promise<[unknown[], unknown[]]> {
    const order = 'ORDER BY account_id, day, chain_id, action COLLATE "C"';
    const stored = await t.dataSource.query(
      `SELECT account_id, day::text AS day, chain_id, action, count::int AS count FROM event_counts ${order}`,
    );
    const truth = await t.dataSource.query(
      `SELECT account_id, ("timestamp" AT TIME ZONE 'UTC')::date::text AS day, chain_id, action, count(*)::int AS count
         FROM events GROUP BY 1, 2, 3, 4 ${order}`,
    );
    return [stored as unknown[], truth as unknown[]];
  }
  const expectRollupExact = async () => {
    const [stored, truth] = await rollupAndTruth();
    expect(stored.length).toBeGreaterThan(0);
    expect(stored).toEqual(truth);
  };

  const eventsOf = async (accountId: string): Promise<Row[]> =>
    await t.dataSource.query<Row[]>(
      `SELECT e.action, audit_uuid_ulid('chn', e.chain_id) AS chain_id, c.name AS chain_name, e."timestamp" FROM events e JOIN chains c ON c.id = e.chain_id
        WHERE e.account_id = audit_ulid_uuid($1)`,
      [accountId],
    );

  /** What GET /v1/stats/events must answer, computed here from the account's events. */
  function expected(rows: Row[], query: Record<string, string>, keep: (r: Row) => boolean = () => true) {
    const [after, before] = [Date.parse(query.after!), Date.parse(query.before!)];
    const matching = rows.filter((r) => r.timestamp.getTime() >= after && r.timestamp.getTime() <= before && keep(r));
    const group = query.group_by!;
    if (group === 'hour' || group === 'day') {
      const size = group === 'hour' ? HOUR : DAY;
      const data: Bucket[] = [];
      for (let start = Math.floor(after / size) * size; start <= before; start += size) {
        const count = matching.filter((r) => r.timestamp.getTime() >= start && r.timestamp.getTime() < start + size);
        data.push({ key: new Date(start).toISOString(), count: count.length });
      }
      return { data, total: matching.length };
    }
    const counts = new Map<string, number>();
    for (const r of matching) {
      const key = group === 'action' ? r.action : r.chain_id;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    const data = [...counts]
      .map(([key, count]) => ({ key, count }))
      .sort((a, b) => b.count - a.count || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0))
      .slice(0, Number(query.limit ?? 50));
    return { data, total: matching.length };
  }

  beforeAll(async () => {
    t = await startTestApp({ retentionSweepSeconds: 0, bootstrapKeys: adminBootstrapKeys() });
    for (const name of ['alpha', 'beta', 'gamma']) {
      const res = await append(name, 1);
      chains[name] = res.body.data[0].chain.id;
    }
    const [owner] = await t.dataSource.query<
      {
        account_id: string;
      }[]
    >(`SELECT audit_uuid_ulid('acc', account_id) AS account_id FROM events WHERE chain_id = audit_ulid_uuid($1)`, [
      chains.alpha,
    ]);
    acmeId = owner!.account_id;
    // 300 events over 60 hours from 2026-03-01T20:00Z (two UTC day changes), at odd times, written
    // straight into events (triggers that check appends off; the rollup's fire ALWAYS).
    const error = await attemptSql(t.dataSource, async (sql) => {
      await sql.query(`SET LOCAL session_replication_role = replica`);
      for (let i = 0; i < 300; i++) {
        await sql.query(
          `INSERT INTO events (id, account_id, chain_id, position, actor, action, resource, context, "timestamp", previous_hash, hash)
           VALUES (audit_ulid_uuid($1), audit_ulid_uuid($2), audit_ulid_uuid($3), $4, 'bob', $5, NULL, NULL, $6, decode($7, 'hex'), decode($7, 'hex'))`,
          [
            `evt_0SYNTH${String(i).padStart(20, '0')}`,
            acmeId,
            Object.values(chains)[i % 3],
            1000 + i,
            ACTIONS[(i * 7) % 4],
            new Date(BASE + Math.floor((i * 60 * HOUR) / 300) + ((i * 7919) % 3_599_999)).toISOString(),
            '0'.repeat(64),
          ],
        );
      }
    });
    expect(error).toBeNull();
  });
  afterAll(async () => {
    await t.close();
  });

  it('holds exactly the GROUP BY over the events, and the migration counts existing events (down, then up)', async () => {
    await expectRollupExact();
    const runner = t.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      // The rollup's migration as it was written, on the ids as they were then (text: 1765900000000 undone around it).
      // (And 1766200000000, whose action schemas refer to the accounts' binary ids.)
      await new ActionSchemas1766200000000().down(runner);
      await new BinaryIds1765900000000().down(runner);
      await new EventCounts1764900000000().down(runner);
      await new EventCounts1764900000000().up(runner);
      await new BinaryIds1765900000000().up(runner);
      await new ActionSchemas1766200000000().up(runner);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    await expectRollupExact();
  });

  // Edges inside days and hours, on midnight, across day changes; one day, one hour, one millisecond.
  const PERIODS = [
    ['2026-03-01T20:17:03.123Z', '2026-03-04T05:41:59.877Z'],
    ['2026-03-01T12:00:00.000Z', '2026-03-03T23:59:59.999Z'],
    ['2026-03-01T00:00:00.000Z', '2026-03-04T00:00:00.000Z'],
    ['2026-03-02T00:00:00.000Z', '2026-03-02T23:59:59.999Z'],
    ['2026-03-02T23:30:00.000Z', '2026-03-03T00:29:59.999Z'],
    ['2026-03-02T07:00:00.001Z', '2026-03-02T07:59:59.998Z'],
    ['2026-03-02T07:00:00.000Z', '2026-03-02T07:00:00.000Z'],
    ['9999-12-30T12:00:00.000Z', '9999-12-31T23:59:59.999Z'], // the last whole day there is
  ];
  const GROUPS = ['action', 'chain', 'hour', 'day'];

  it.each(PERIODS)('every group_by from %s to %s equals the GROUP BY of the events', async (after, before) => {
    const rows = await eventsOf(acmeId);
    for (const group_by of GROUPS) {
      const query = { after: after, before: before, group_by, limit: '1000' };
      expect({ query, body: await stats(query) }).toEqual({ query, body: expected(rows, query) });
    }
  });

  it('with chain, action and q terms the rollup answers (time terms narrowing the period), and limit', async () => {
    const rows = await eventsOf(acmeId);
    const [after, before] = PERIODS[0]!;
    const cut = Date.parse('2026-03-02T13:30:00.000Z');
    const cases: [Record<string, string>, (r: Row) => boolean][] = [
      [{ chain_id: chains.beta! }, (r) => r.chain_id === chains.beta],
      [{ action: 'order.paid' }, (r) => r.action === 'order.paid'],
      [{ q: 'action:order.* -chain:gamma' }, (r) => r.action.startsWith('order.') && r.chain_name !== 'gamma'],
      [
        { q: `chain_id:${chains.alpha} timestamp:>2026-03-02T13:30:00Z` },
        (r) => r.chain_id === chains.alpha && r.timestamp.getTime() > cut,
      ],
      [
        { q: '-timestamp:>=2026-03-02T13:30:00Z -action:user.login' },
        (r) => r.timestamp.getTime() < cut && r.action !== 'user.login',
      ],
      [{ q: 'timestamp:<2026-01-01T00:00:00Z' }, () => false],
      [{ limit: '2' }, () => true],
    ];
    for (const [filters, keep] of cases) {
      for (const group_by of GROUPS) {
        const query = { after: after!, before: before!, group_by, limit: '1000', ...filters };
        expect({ query, body: await stats(query) }).toEqual({ query, body: expected(rows, query, keep) });
      }
    }
  });

  it('is really read: a tampered row changes an eligible answer, not an ineligible one', async () => {
    const query = { after: PERIODS[0]![0]!, before: PERIODS[0]![1]!, group_by: 'action', limit: '1000' };
    const truth = await stats(query);
    // One row, chosen once by its key: a `ctid … LIMIT 1` chosen again for the restore could pick another of
    // the day's order.paid rows (an update moves the row), and take 1,000 from a count of 10.
    const [{ chain_id: tamperedChain }] = await t.dataSource.query<[{ chain_id: string }]>(
      `SELECT audit_uuid_ulid('chn', chain_id) AS chain_id FROM event_counts WHERE account_id = audit_ulid_uuid($1) AND action = 'order.paid' AND day = '2026-03-03'
        ORDER BY chain_id LIMIT 1`,
      [acmeId],
    );
    const tamper = (delta: number) =>
      t.dataSource.query(
        `UPDATE event_counts SET count = count + $3
          WHERE account_id = audit_ulid_uuid($1) AND day = '2026-03-03' AND chain_id = audit_ulid_uuid($2) AND action = 'order.paid'`,
        [acmeId, tamperedChain, delta],
      );
    await tamper(1000);
    try {
      const tampered = await stats(query);
      expect(tampered.total).toBe(truth.total + 1000);
      expect(tampered.data.find((b) => b.key === 'order.paid')!.count).toBe(
        truth.data.find((b) => b.key === 'order.paid')!.count + 1000,
      );
      // By day too; by hour, an actor term or a context term reads the events.
      expect((await stats({ ...query, group_by: 'day' })).total).toBe(truth.total + 1000);
      expect((await stats({ ...query, group_by: 'hour' })).total).toBe(truth.total);
      expect(await stats({ ...query, q: '-actor:nobody' })).toEqual(truth);
      expect(await stats({ ...query, q: '-context.x:1' })).toEqual(truth);
    } finally {
      await tamper(-1000);
    }
    expect(await stats(query)).toEqual(truth);
  });

  it('stays exact under concurrent appends on several chains (single and batch)', async () => {
    const names = ['c1', 'c2', 'c3', 'c4', 'c5'];
    await Promise.all(
      names.flatMap((name, n) =>
        Array.from({ length: 6 }, (_, i) =>
          i % 2
            ? append(name, 25, KEYS.acme, n + i)
            : req()
                .post('/v1/events')
                .set(...bearer(KEYS.acme))
                .send({ actor: 'carol', action: ACTIONS[(n + i) % 4], chain: name })
                .expect(201),
        ),
      ),
    );
    await expectRollupExact();
    const rows = await eventsOf(acmeId);
    const now = Date.now();
    const around = { after: new Date(now - 2 * DAY - 17_123).toISOString(), before: new Date(now + 1).toISOString() };
    for (const group_by of GROUPS) {
      const query = { ...around, group_by, limit: '1000' };
      expect({ query, body: await stats(query) }).toEqual({ query, body: expected(rows, query) });
    }
  });

  it('stays exact after a retention prune, and other deletes are still refused', async () => {
    const first = await append('pruned', 30, KEYS.globex);
    const chainId = first.body.data[0].chain.id as string;
    const globexId = (
      await t.dataSource.query<
        {
          account_id: string;
        }[]
      >(`SELECT audit_uuid_ulid('acc', account_id) AS account_id FROM chains WHERE id = audit_ulid_uuid($1)`, [chainId])
    )[0]!.account_id;
    await req()
      .put(`/v1/chain/${chainId}/retention`)
      .set(...bearer(ADMIN_KEYS.globexAdmin))
      .send({ days: 1 })
      .expect(200);
    t.config.retentionClockOffsetSeconds = 2 * 86_400;
    try {
      const swept = await req()
        .post('/v1/retention/sweep')
        .set(...bearer(ADMIN_KEYS.operator))
        .expect(200);
      expect(swept.body.data.events).toBeGreaterThanOrEqual(30);
    } finally {
      t.config.retentionClockOffsetSeconds = 0;
    }
    await expectRollupExact();
    const rows = await eventsOf(globexId);
    const query = {
      after: new Date(Date.now() - DAY).toISOString(),
      before: new Date().toISOString(),
      group_by: 'chain',
    };
    expect(await stats(query, KEYS.globex)).toEqual(expected(rows, query));

    const before = await rollupAndTruth();
    for (const [sql, param] of [
      [`DELETE FROM events WHERE chain_id = audit_ulid_uuid($1)`, chains.alpha],
      [`DELETE FROM events WHERE account_id = audit_ulid_uuid($1)`, acmeId],
    ]) {
      const error = await attemptSql(t.dataSource, (m) => m.query(sql!, [param]));
      expect(error?.message).toMatch(/append-only/);
    }
    expect(await rollupAndTruth()).toEqual(before);
  });

  // PGlite has one superuser session and no roles (docs/verification.md §7).
  (usingPostgres() ? it : it.skip)(
    'the least-privilege service role appends through the triggers but cannot write event_counts itself',
    async () => {
      const role = `rollup_svc_${Date.now()}`;
      await t.dataSource.query(`CREATE ROLE ${role} NOLOGIN`);
      try {
        await t.dataSource.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
        await t.dataSource.query(`GRANT SELECT, INSERT ON events, chains TO ${role}`);
        await t.dataSource.query(`GRANT SELECT ON event_counts TO ${role}`);
        const [head] = await t.dataSource.query<{ position: number; hash: string }[]>(
          `SELECT last_position::int AS position, encode(last_hash, 'hex') AS hash FROM chains WHERE id = audit_ulid_uuid($1)`,
          [chains.gamma],
        );
        const counted = () =>
          `SELECT coalesce(sum(count), 0)::int AS n FROM event_counts
            WHERE chain_id = audit_ulid_uuid('${chains.gamma}') AND action = 'role.check'`;
        const seen: number[] = [];
        const sentinel = 'rolled back on purpose';
        const error = await attemptSql(t.dataSource, async (m) => {
          await m.query(`SET LOCAL SESSION AUTHORIZATION ${role}`);
          await m.query(
            `INSERT INTO events (id, account_id, chain_id, position, actor, action, "timestamp", previous_hash, hash)
             VALUES (gen_random_uuid(), audit_ulid_uuid($1), audit_ulid_uuid($2), $3, 'svc', 'role.check', now(), decode($4, 'hex'), decode($4, 'hex'))`,
            [acmeId, chains.gamma, head!.position + 1, head!.hash],
          );
          seen.push(((await m.query(counted())) as { rows: { n: number }[] }).rows[0]!.n);
          throw new Error(sentinel);
        });
        expect(error?.message).toBe(sentinel);
        expect(seen).toEqual([1]);
        const write = await attemptSql(t.dataSource, async (m) => {
          await m.query(`SET LOCAL SESSION AUTHORIZATION ${role}`);
          await m.query(`UPDATE event_counts SET count = count + 1`);
        });
        expect(write?.message).toMatch(/permission denied/);
      } finally {
        await t.dataSource.query(`DROP OWNED BY ${role}`);
        await t.dataSource.query(`DROP ROLE ${role}`);
      }
    },
  );
});
