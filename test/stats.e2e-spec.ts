import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';
import { attemptSql } from './support/raw-sql';

/**
 * GET /v1/stats/events (docs/contract.md §13) against a GROUP BY done here, over events whose timestamps
 * cross UTC day changes: besides appended events, rows are written straight into `events` with
 * chosen timestamps (triggers off for that session: stats read rows, they do not verify them).
 */
type Row = { action: string; actor: string; resource: string | null; chain_id: string; timestamp: Date };
type Bucket = { key: string | null; count: number };

const BASE = Date.parse('2026-03-01T22:00:00.000Z');
const HOUR = 3_600_000;

describe('GET /v1/stats/events', () => {
  let t: TestApp;
  let rows: Row[];
  let acmeId: string;

  const stats = (query: Record<string, string>, key: string = KEYS.acme) =>
    t
      .http()
      .get('/v1/stats/events')
      .query(query)
      .set(...bearer(key));

  beforeAll(async () => {
    t = await startTestApp();
    const chains: string[] = [];
    for (const [i, chain] of ['alpha', 'beta', 'gamma'].entries()) {
      const res = await t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send({ actor: `boot-${i}`, action: 'chain.opened', chain })
        .expect(201);
      chains.push(res.body.data.chain.id);
    }
    await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.globex))
      .send({ actor: 'alice', action: 'order.created', resource: 'x' })
      .expect(201);
    const [owner] = await t.dataSource.query<
      {
        account_id: string;
      }[]
    >(`SELECT audit_uuid_ulid('acc', account_id) AS account_id FROM events WHERE chain_id = audit_ulid_uuid($1)`, [
      chains[0],
    ]);
    acmeId = owner!.account_id;
    // 150 events from 2026-03-01T22:00Z over 50 hours (two UTC day changes), at whole and odd times.
    const error = await attemptSql(t.dataSource, async (sql) => {
      await sql.query(`SET LOCAL session_replication_role = replica`);
      for (let i = 0; i < 150; i++) {
        await sql.query(
          `INSERT INTO events (id, account_id, chain_id, position, actor, action, resource, context, "timestamp", previous_hash, hash)
           VALUES (audit_ulid_uuid($1), audit_ulid_uuid($2), audit_ulid_uuid($3), $4, $5, $6, $7, NULL, $8, decode($9, 'hex'), decode($9, 'hex'))`,
          [
            `evt_0SYNTH${String(i).padStart(20, '0')}`,
            acmeId,
            chains[i % 3],
            1000 + i,
            ['alice', 'bob', 'carol', 'dave'][i % 4],
            ['order.created', 'order.paid', 'user.login'][(i * 7) % 3],
            i % 5 === 0 ? null : `res-${i % 6}`,
            new Date(BASE + Math.floor((i * 50 * HOUR) / 150) + (i % 2 ? 0 : 59 * 60_000 + 999)).toISOString(),
            '0'.repeat(64),
          ],
        );
      }
    });
    expect(error).toBeNull();
    rows = await t.dataSource.query<Row[]>(
      `SELECT action, actor, resource, audit_uuid_ulid('chn', chain_id) AS chain_id, "timestamp" FROM events WHERE account_id = audit_ulid_uuid($1)`,
      [acmeId],
    );
  });
  afterAll(async () => {
    await t.close();
  });

  /** The test's own GROUP BY: largest counts first, ties by key, null last. */
  function grouped(keep: (r: Row) => boolean, keyOf: (r: Row) => string | null): Bucket[] {
    const counts = new Map<string | null, number>();
    for (const r of rows.filter(keep)) counts.set(keyOf(r), (counts.get(keyOf(r)) ?? 0) + 1);
    return [...counts]
      .map(([key, count]) => ({ key, count }))
      .sort((a, b) =>
        a.count !== b.count
          ? b.count - a.count
          : a.key === b.key
            ? 0
            : a.key === null
              ? 1
              : b.key === null
                ? -1
                : a.key < b.key
                  ? -1
                  : 1,
      );
  }
  const within = (after: string, before: string) => (r: Row) =>
    r.timestamp.getTime() >= Date.parse(after) && r.timestamp.getTime() <= Date.parse(before);

  const PERIOD = { after: '2026-03-01T00:00:00.000Z', before: '2026-03-04T00:00:00.000Z' };

  it.each([
    ['action', (r: Row) => r.action],
    ['actor', (r: Row) => r.actor],
    ['resource', (r: Row) => r.resource],
    ['chain', (r: Row) => r.chain_id],
  ] as const)('group_by=%s equals the GROUP BY', async (group, keyOf) => {
    const res = await stats({ ...PERIOD, group_by: group, limit: '1000' }).expect(200);
    const expected = grouped(within(PERIOD.after, PERIOD.before), keyOf);
    const total = rows.filter(within(PERIOD.after, PERIOD.before)).length;
    expect(res.body).toEqual({ data: expected, total });
    const top = await stats({ ...PERIOD, group_by: group, limit: '2' }).expect(200);
    expect(top.body).toEqual({ data: expected.slice(0, 2), total });
  });

  it.each([
    ['hour', HOUR],
    ['day', 24 * HOUR],
  ] as const)('group_by=%s has every UTC bucket, zeros included, edges inclusive', async (unit, size) => {
    // From an event's exact timestamp to another's: both edges count.
    const sorted = rows.map((r) => r.timestamp.getTime()).sort((a, b) => a - b);
    const after = new Date(sorted[10]!).toISOString();
    // For hours, three empty hours after the last event too.
    const before = new Date(unit === 'hour' ? sorted.at(-1)! + 3 * HOUR : sorted[140]!).toISOString();
    const res = await stats({ after, before, group_by: unit }).expect(200);
    const keep = within(after, before);
    const first = Math.floor(Date.parse(after) / size) * size;
    const last = Math.floor(Date.parse(before) / size) * size;
    const expected: Bucket[] = [];
    for (let start = first; start <= last; start += size) {
      expected.push({
        key: new Date(start).toISOString(),
        count: rows.filter((r) => keep(r) && r.timestamp.getTime() >= start && r.timestamp.getTime() < start + size)
          .length,
      });
    }
    expect(res.body.data).toEqual(expected);
    expect(res.body.total).toBe(rows.filter(keep).length);
    if (unit === 'day') expect(expected.map((b) => b.key)).toContain('2026-03-02T00:00:00.000Z');
    if (unit === 'hour') expect(expected.some((b) => b.count === 0)).toBe(true);
  });

  it('combines with q and the list filters, and never counts another account', async () => {
    const res = await stats({ ...PERIOD, group_by: 'actor', q: 'action:order.* -resource:res-1' }).expect(200);
    expect(res.body.data).toEqual(
      grouped(
        (r) => within(PERIOD.after, PERIOD.before)(r) && r.action.startsWith('order.') && r.resource !== 'res-1',
        (r) => r.actor,
      ),
    );
    const globex = await stats({ ...PERIOD, group_by: 'actor' }, KEYS.globex).expect(200);
    expect(globex.body).toEqual({ data: [], total: 0 });
  });

  it.each([
    [{ group_by: 'action', before: PERIOD.before }, 'after'],
    [{ group_by: 'action', after: PERIOD.after }, 'before'],
    [{ ...PERIOD, group_by: 'minute' }, 'group_by'],
    [{ ...PERIOD, group_by: 'action', limit: '1001' }, 'limit'],
    [{ after: '2025-01-01T00:00:00Z', before: '2026-01-03T00:00:00Z', group_by: 'day' }, 'before'],
    [{ after: PERIOD.before, before: PERIOD.after, group_by: 'day' }, 'before'],
    [{ ...PERIOD, group_by: 'day', q: 'actor:' }, 'q'],
  ])('refuses %j naming %s', async (query, field) => {
    const res = await stats(query as Record<string, string>).expect(400);
    expect(res.body.error.details.fields.map((f: { field: string }) => f.field)).toContain(field);
  });

  it('accepts exactly 366 days, and needs the read scope', async () => {
    await stats({ after: '2025-01-01T00:00:00Z', before: '2026-01-02T00:00:00Z', group_by: 'day' }).expect(200);
    await stats({ ...PERIOD, group_by: 'day' }, KEYS.acmeIngestOnly).expect(403);
  });
});
