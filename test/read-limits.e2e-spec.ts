import request from 'supertest';
import { BoundedReads } from '../apps/api/src/reads/bounded-reads';
import { bearer, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';

/**
 * docs/contract.md §8, "No tenant starves another": reads over many events (list and search, statistics,
 * export) are limited per account (READS_PER_ACCOUNT, 429 at once beyond) and each statement runs
 * under QUERY_TIMEOUT_SECONDS in PostgreSQL (422 QUERY_TOO_EXPENSIVE past it). Reads are held in
 * flight by an ACCESS EXCLUSIVE lock on `events`, taken on a connection of the test: every read of
 * the table waits for it (on the embedded database that connection is also the pool's only one).
 */
const PERIOD = { after: '2000-01-01T00:00:00Z', before: '2100-01-01T00:00:00Z' };
const READS: [string, Record<string, string>][] = [
  ['/v1/events', { q: 'actor:alice' }],
  ['/v1/stats/events', { group_by: 'resource', after: '2026-01-01T00:00:00Z', before: '2026-12-31T00:00:00Z' }],
  ['/v1/events/export', { format: 'json', ...PERIOD }],
];

async function waitFor(condition: () => Promise<boolean> | boolean, attempts = 200): Promise<boolean> {
  for (let i = 0; i < attempts; i++) {
    if (await condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

/** Holds every read of `events` until the returned function is called. */
async function lockEvents(
  t: TestApp,
): Promise<{ query: (sql: string) => Promise<unknown>; unlock: () => Promise<void> }> {
  const runner = t.dataSource.createQueryRunner();
  await runner.connect();
  await runner.query('BEGIN');
  await runner.query('LOCK TABLE events IN ACCESS EXCLUSIVE MODE');
  return {
    query: (sql) => runner.query(sql),
    unlock: async () => {
      await runner.query('ROLLBACK');
      await runner.release();
    },
  };
}

async function seed(t: TestApp): Promise<Record<'acme' | 'globex', string>> {
  for (const key of [KEYS.acme, KEYS.globex]) {
    await t
      .http()
      .post('/v1/events')
      .set(...bearer(key))
      .send({ actor: 'alice', action: 'order.created', resource: 'order/1' })
      .expect(201);
  }
  const rows = await t.dataSource.query<
    {
      id: string;
      name: 'acme' | 'globex';
    }[]
  >(`SELECT audit_uuid_ulid('acc', id) AS id, name FROM accounts WHERE name IN ('acme', 'globex')`);
  return Object.fromEntries(rows.map((row) => [row.name, row.id])) as Record<'acme' | 'globex', string>;
}

const get = (t: TestApp, key: string, [path, query]: [string, Record<string, string>]): request.Test =>
  t
    .http()
    .get(path)
    .query(query)
    .set(...bearer(key));

describe('READS_PER_ACCOUNT', () => {
  let t: TestApp;
  let accounts: Record<'acme' | 'globex', string>;

  beforeAll(async () => {
    t = await startTestApp({ readsPerAccount: 2 });
    accounts = await seed(t);
  });
  afterAll(async () => {
    await t.close();
  });

  it('refuses an account’s read beyond its limit at once (429 + Retry-After), never another account’s', async () => {
    const reads = t.app.get(BoundedReads);
    // Keys are looked up before the lock (then cached), so only the reads wait for it.
    for (const key of [KEYS.acme, KEYS.globex]) await get(t, key, READS[0]!).expect(200);
    const lock = await lockEvents(t);
    let held: Promise<request.Response>[] = [];
    try {
      held = [get(t, KEYS.acme, READS[0]!).then((r) => r), get(t, KEYS.acme, READS[1]!).then((r) => r)];
      expect(await waitFor(() => reads.inFlightOf(accounts.acme) === 2)).toBe(true);
      for (const read of READS) {
        const started = Date.now();
        const res = await get(t, KEYS.acme, read).expect(429);
        expect(Date.now() - started).toBeLessThan(1000); // refused, not queued behind the lock
        expect(res.headers['retry-after']).toBe('1');
        expect(res.body.error).toEqual({
          code: 'RATE_LIMITED',
          message: expect.stringContaining('2 read(s)'),
          details: { limit: 2 },
        });
      }
      // Refused before its query is parsed (ReadAdmission): a malformed q at the limit is a 429, not a 400,
      // so a tenant looping on refused reads costs the instance little more than the refusal.
      for (const path of ['/v1/events', '/v1/stats/events', '/v1/events/export'])
        await get(t, KEYS.acme, [path, { q: 'actor:' }]).expect(429);
      // The other account is not refused: its read waits for the lock like any read.
      held.push(get(t, KEYS.globex, READS[0]!).then((r) => r));
      expect(await waitFor(() => reads.inFlightOf(accounts.globex) === 1)).toBe(true);
    } finally {
      await lock.unlock();
    }
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200, 200]);
    expect([reads.inFlightOf(accounts.acme), reads.inFlightOf(accounts.globex)]).toEqual([0, 0]);
  });

  it('gives every slot back however a read ends: answered, exported, refused by validation', async () => {
    const reads = t.app.get(BoundedReads);
    await get(t, KEYS.acme, READS[2]!).expect(200);
    await get(t, KEYS.acme, ['/v1/events', { q: 'actor:' }]).expect(400);
    await get(t, KEYS.acme, ['/v1/events', { cursor: 'not-a-cursor' }]).expect(400);
    expect(reads.inFlightOf(accounts.acme)).toBe(0);
    for (let i = 0; i < 3; i++) for (const read of READS) await get(t, KEYS.acme, read).expect(200);
  });
});

(usingPostgres() ? describe : describe.skip)(
  'QUERY_TIMEOUT_SECONDS (PostgreSQL: PGlite has no statement timeout)',
  () => {
    let t: TestApp;

    beforeAll(async () => {
      // A pool of 3: the cancelled reads below reuse each connection several times.
      t = await startTestApp({ queryTimeoutSeconds: 0.2, databasePoolSize: 3, readsPerAccount: 10 });
      await seed(t);
    });
    afterAll(async () => {
      await t.close();
    });

    it('cancels a read in the database past it: 422 QUERY_TOO_EXPENSIVE with details.timeoutSeconds, before any byte', async () => {
      const lock = await lockEvents(t);
      try {
        for (const read of READS) {
          const started = Date.now();
          const res = await get(t, KEYS.acme, read).expect(422);
          expect(Date.now() - started).toBeGreaterThanOrEqual(190);
          expect(res.headers['content-type']).toMatch(/^application\/json/);
          expect(res.body.error).toEqual({
            code: 'QUERY_TOO_EXPENSIVE',
            message: expect.stringContaining('longer than 0.2 s'),
            details: { timeoutSeconds: 0.2 },
          });
        }
        // Cancelled in PostgreSQL, not abandoned: nothing waits for the lock any more.
        expect(await lock.query(`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`)).toEqual([{ n: 0 }]);
      } finally {
        await lock.unlock();
      }
      // No export was recorded for the cancelled one.
      const audit = await get(t, KEYS.acme, ['/v1/events', { q: 'action:export.created' }]).expect(200);
      expect(audit.body.data).toEqual([]);
    });

    it('leaves no connection poisoned: after cancelled reads every pooled connection is idle at the default timeout', async () => {
      const lock = await lockEvents(t);
      try {
        const results = await Promise.all(
          Array.from({ length: 8 }, (_, i) => get(t, KEYS.acme, READS[i % READS.length]!).then((r) => r.status)),
        );
        expect(results).toEqual(Array(8).fill(422));
      } finally {
        await lock.unlock();
      }
      // Three at once take every connection of the pool (3, one of them the lock's, released).
      const settings = (await Promise.all(
        [1, 2, 3].map(() =>
          t.dataSource.query(
            `SELECT current_setting('statement_timeout') AS timeout, now() = statement_timestamp() AS idle, pg_sleep(0.1) IS NULL AS slept`,
          ),
        ),
      )) as { timeout: string; idle: boolean }[][];
      expect(settings.map(([row]) => [row!.timeout, row!.idle])).toEqual([
        ['0', true],
        ['0', true],
        ['0', true],
      ]);
      for (const read of READS) await get(t, KEYS.acme, read).expect(200);
      await t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send({ actor: 'alice', action: 'after.cancel' })
        .expect(201);
    });
  },
);
