import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { keyLockId } from '@app/database';
import { IdempotencySweeper } from '../apps/api/src/events/idempotency-sweeper';
import { IdempotencyService } from '../apps/api/src/events/idempotency.service';
import { databaseUrl, withAdmin } from './support/postgres';
import { bearer, freshDatabase, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';

describe('Idempotency-Key on POST /v1/events', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const post = (body: object, key?: string, apiKey: string = KEYS.acme) => {
    const req = t
      .http()
      .post('/v1/events')
      .set(...bearer(apiKey));
    if (key !== undefined) req.set('Idempotency-Key', key);
    return req.send(body);
  };
  const countIn = async (chain: string) =>
    (
      await t.dataSource.query<[{ n: number }]>(
        `SELECT count(*)::int AS n FROM events e JOIN chains c ON c.id = e.chain_id WHERE c.name = $1`,
        [chain],
      )
    )[0].n;

  it('replays the same status and body byte for byte, with Idempotent-Replayed, appending nothing', async () => {
    const body = { actor: 'a', action: 'pay.create', context: { z: 1, a: [2, 'é'] }, chain: 'idem-1' };
    const first = await post(body, 'order-1').expect(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post(body, 'order-1').expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await countIn('idem-1')).toBe(1);
  });

  it('turns a keyed response into JSON once, on either endpoint: the stored text is the body sent and replayed', async () => {
    const stringify = jest.spyOn(JSON, 'stringify');
    const responsesStringified = () =>
      stringify.mock.calls.filter(([value]) => typeof value === 'object' && value !== null && 'data' in value).length;
    try {
      const single = await post({ actor: 'a', action: 'x', chain: 'idem-once' }, 'once-1').expect(201);
      expect(responsesStringified()).toBe(1);
      const batch = await t
        .http()
        .post('/v1/events/batch')
        .set(...bearer(KEYS.acme))
        .set('Idempotency-Key', 'once-2')
        .send({ events: [{ actor: 'a', action: 'x', chain: 'idem-once' }] })
        .expect(201);
      expect(responsesStringified()).toBe(2);
      const stored = await t.dataSource.query<{ key: string; response: string }[]>(
        `SELECT key, response FROM idempotency_keys WHERE key IN ('once-1', 'once-2') ORDER BY key`,
      );
      expect(stored.map((r) => r.response)).toEqual([single.text, batch.text]);
      expect(single.headers['content-type']).toBe('application/json; charset=utf-8');
      const replay = await post({ actor: 'a', action: 'x', chain: 'idem-once' }, 'once-1').expect(201);
      expect(replay.text).toBe(single.text);
      expect(replay.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(responsesStringified()).toBe(2);
    } finally {
      stringify.mockRestore();
    }
  });

  it('422 IDEMPOTENCY_KEY_REUSED for the same key with a different body', async () => {
    await post({ actor: 'a', action: 'x', chain: 'idem-2' }, 'order-2').expect(201);
    const res = await post({ actor: 'a', action: 'y', chain: 'idem-2' }, 'order-2').expect(422);
    expect(res.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await countIn('idem-2')).toBe(1);
  });

  it('keys are scoped to the account', async () => {
    const body = { actor: 'a', action: 'x', chain: 'idem-3' };
    const mine = await post(body, 'shared-key').expect(201);
    const theirs = await post(body, 'shared-key', KEYS.globex).expect(201);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.data.id).not.toBe(mine.body.data.id);
  });

  it('many concurrent requests with one key append exactly one event; the others get 409 or the replay', async () => {
    const body = { actor: 'a', action: 'race', chain: 'idem-4' };
    const results = await Promise.all(Array.from({ length: 40 }, () => post(body, 'race-key')));
    const created = results.filter((r) => r.status === 201);
    const inProgress = results.filter((r) => r.status === 409);
    expect(created.length + inProgress.length).toBe(40);
    expect(new Set(created.map((r) => r.body.data.id)).size).toBe(1);
    inProgress.forEach((r) => expect(r.body.error.code).toBe('IDEMPOTENCY_IN_PROGRESS'));
    expect(await countIn('idem-4')).toBe(1);
    const later = await post(body, 'race-key').expect(201);
    expect(later.headers['idempotent-replayed']).toBe('true');
  });

  it('a claim an earlier version left without an answer is taken over at once, however young: one event', async () => {
    // Earlier versions claimed a key before the append, outside its transaction (docs/contract.md §21).
    const [{ id: accountId }] = await t.dataSource.query<[{ id: string }]>(
      `SELECT audit_uuid_ulid('acc', id) AS id FROM accounts WHERE name = 'acme'`,
    );
    const body = { actor: 'a', action: 'x', chain: 'idem-5' };
    const digest = IdempotencyService.digest('POST /v1/events', [
      { chainName: 'idem-5', actor: 'a', action: 'x', resource: null, context: null },
    ]);
    await t.dataSource.query(
      `INSERT INTO idempotency_keys (account_id, key, request_digest) VALUES (audit_ulid_uuid($1), 'left', $2)`,
      [accountId, digest],
    );
    const first = await post(body, 'left').expect(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await post(body, 'left').expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await countIn('idem-5')).toBe(1);
  });

  it('one key used by two accounts at the same moment: each appends its own event, neither is 409', async () => {
    const body = { actor: 'a', action: 'x', chain: 'idem-both' };
    const [mine, theirs] = await Promise.all([post(body, 'both-at-once'), post(body, 'both-at-once', KEYS.globex)]);
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect([mine.headers['idempotent-replayed'], theirs.headers['idempotent-replayed']]).toEqual([
      undefined,
      undefined,
    ]);
    expect(mine.body.data.id).not.toBe(theirs.body.data.id);
  });

  it('a hostile key (every printable character, quotes and backslashes, the maximum length) is only a key: appended once, replayed', async () => {
    const printable = Array.from({ length: 0x7e - 0x20 }, (_, i) => String.fromCharCode(0x21 + i)).join('');
    const key = `${printable}' OR 1=1; -- \\ %s $1 ${'x'.repeat(255)}`.slice(0, 255);
    const body = { actor: 'a', action: 'x', chain: 'idem-hostile' };
    const first = await post(body, key).expect(201);
    const again = await post(body, key).expect(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await countIn('idem-hostile')).toBe(1);
  });

  it.each([['a'.repeat(256)], ['tab\there'], ['é'], ['']])('400 for an invalid Idempotency-Key %j', async (key) => {
    const res = await post({ actor: 'a', action: 'x', chain: 'idem-6' }, key).expect(400);
    expect(res.body.error.details.fields[0].field).toBe('Idempotency-Key');
    expect(await countIn('idem-6')).toBe(0);
  });
  it('forgets a key IDEMPOTENCY_RETENTION_HOURS (24) after its claim, and keeps younger ones', async () => {
    await post({ actor: 'a', action: 'x', chain: 'idem-retention' }, 'old-key').expect(201);
    await post({ actor: 'a', action: 'x', chain: 'idem-retention' }, 'young-key').expect(201);
    await t.dataSource.query(
      `UPDATE idempotency_keys SET claimed_at = now() - interval '25 hours' WHERE key = 'old-key'`,
    );
    await t.dataSource.query(
      `UPDATE idempotency_keys SET claimed_at = now() - interval '23 hours' WHERE key = 'young-key'`,
    );
    expect(await t.app.get(IdempotencySweeper).sweep()).toBe(1);
    // The old key is free again: another body under it is a new request, not a reuse.
    const again = await post({ actor: 'a', action: 'y', chain: 'idem-retention' }, 'old-key').expect(201);
    expect(again.headers['idempotent-replayed']).toBeUndefined();
    expect(
      (await post({ actor: 'a', action: 'y', chain: 'idem-retention' }, 'young-key').expect(422)).body.error.code,
    ).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await countIn('idem-retention')).toBe(3);
  });
});

// A lock held by another connection, and a connection cut, need a second connection to a server
// we administer; the embedded PGlite is one process's single session, so this runs where PostgreSQL is (CI).
(usingPostgres() ? describe : describe.skip)(
  'Idempotency-Key: a claim lives only as long as its transaction (docs/contract.md §7, §21)',
  () => {
    let t: TestApp;
    let name: string;
    let accountId: string;
    beforeAll(async () => {
      const database = await freshDatabase();
      name = new URL(database.url!).pathname.slice(1);
      t = await startTestApp({}, database);
      [{ id: accountId }] = await t.dataSource.query<[{ id: string }]>(
        `SELECT audit_uuid_ulid('acc', id) AS id FROM accounts WHERE name = 'acme'`,
      );
    });
    afterAll(async () => {
      await withAdmin((admin) => admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`));
      await t.close();
    });

    const send = (chain: string, key?: string, actor = 'a') => {
      const req = t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme));
      if (key) req.set('Idempotency-Key', key);
      return req.send({ actor, action: 'claim', chain }).then((r) => r);
    };
    const countIn = async (chain: string) =>
      (
        await t.dataSource.query<[{ n: number }]>(
          `SELECT count(*)::int AS n FROM events e JOIN chains c ON c.id = e.chain_id WHERE c.name = $1`,
          [chain],
        )
      )[0].n;
    /** Polls the database until `done` (no clock involved: the test's own timeout bounds it). */
    const until = async (done: () => Promise<boolean>) => {
      while (!(await done())) await new Promise((resolve) => setTimeout(resolve, 10));
    };
    const lockWaiters = async () =>
      (
        await withAdmin((admin) =>
          admin.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND wait_event_type = 'Lock'`,
            [name],
          ),
        )
      ).rows[0]!.n;
    /** A transaction of another connection holding `chain`'s head: appends to it wait in their transaction. */
    const holdChain = async (chain: string) => {
      await send(chain).then((r) => expect(r.status).toBe(201));
      const holder = new Client({ connectionString: databaseUrl(name) });
      await holder.connect();
      holder.on('error', () => undefined);
      await holder.query('BEGIN');
      await holder.query(`SELECT id FROM chains WHERE name = $1 FOR UPDATE`, [chain]);
      return holder;
    };

    it('409 on this instance while the first request is in its transaction (422 for another body), then the replay: one event', async () => {
      const chain = 'claim-in-flight';
      const holder = await holdChain(chain);
      try {
        const first = send(chain, 'in-flight');
        await until(async () => (await lockWaiters()) >= 1);
        const same = await send(chain, 'in-flight');
        expect(same.status).toBe(409);
        expect(same.body.error.code).toBe('IDEMPOTENCY_IN_PROGRESS');
        expect(same.headers['retry-after']).toBe('1');
        const other = await send(chain, 'in-flight', 'someone else');
        expect(other.status).toBe(422);
        expect(other.body.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
        await holder.query('COMMIT');
        expect((await first).status).toBe(201);
        const again = await send(chain, 'in-flight');
        expect(again.status).toBe(201);
        expect(again.headers['idempotent-replayed']).toBe('true');
        expect(again.body.data.id).toBe((await first).body.data.id);
        expect(await countIn(chain)).toBe(2);
      } finally {
        await holder.end();
      }
    });

    it('409 while another instance’s transaction holds the key, processed as soon as that transaction ends', async () => {
      // What another instance's append transaction holds while it writes under the key.
      const other = new Client({ connectionString: databaseUrl(name) });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query(`SELECT pg_advisory_xact_lock($1)`, [keyLockId(accountId, 'elsewhere')]);
        const meanwhile = await send('claim-elsewhere', 'elsewhere');
        expect(meanwhile.status).toBe(409);
        expect(meanwhile.body.error.code).toBe('IDEMPOTENCY_IN_PROGRESS');
        // Unkeyed appends, other keys and the same key of another account are not held up.
        expect((await send('claim-elsewhere')).status).toBe(201);
        expect((await send('claim-elsewhere', 'another')).status).toBe(201);
        const theirs = await t
          .http()
          .post('/v1/events')
          .set(...bearer(KEYS.globex))
          .set('Idempotency-Key', 'elsewhere')
          .send({ actor: 'a', action: 'claim', chain: 'claim-elsewhere-globex' });
        expect(theirs.status).toBe(201);
        await other.query('ROLLBACK');
        expect((await send('claim-elsewhere', 'elsewhere')).status).toBe(201);
        expect(await countIn('claim-elsewhere')).toBe(3);
      } finally {
        await other.end();
      }
    });

    it('in a tight loop, one key sent 30 times at once through two instances appends exactly once: the others 409 or the replay', async () => {
      const other = await startTestApp(
        {},
        { url: databaseUrl(name), dataDir: mkdtempSync(join(tmpdir(), 'audit-e2e-')) },
      );
      try {
        for (let round = 0; round < 5; round++) {
          const key = `loop-${round}`;
          const results = await Promise.all(
            Array.from({ length: 30 }, (_, i) =>
              (i % 2 === 0 ? t : other)
                .http()
                .post('/v1/events')
                .set(...bearer(KEYS.acme))
                .set('Idempotency-Key', key)
                .send({ actor: 'a', action: 'claim', chain: 'claim-loop' })
                .then((r) => r),
            ),
          );
          const created = results.filter((r) => r.status === 201);
          expect(created.length + results.filter((r) => r.status === 409).length).toBe(30);
          expect(new Set(created.map((r) => r.body.data.id)).size).toBe(1);
          expect(created.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
        }
        expect(await countIn('claim-loop')).toBe(5);
      } finally {
        await other.close();
      }
    });

    it('a request whose connection is cut mid-transaction leaves no claim: its retry with the key is processed at once, one event', async () => {
      const chain = 'claim-cut';
      const holder = await holdChain(chain);
      const cut = send(chain, 'cut-key');
      await until(async () => (await lockWaiters()) >= 1);
      // A failover as the service sees it: every connection of the service terminated, and none to be
      // had for a while. The holder keeps its lock meanwhile: were it terminated too, the request's
      // transaction could take the lock and commit before its own termination lands.
      await withAdmin(async (admin) => {
        await admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS false`);
        await admin.query(
          `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'audit-trail-service'`,
          [name],
        );
      });
      const refused = await cut;
      await holder.query('ROLLBACK');
      await holder.end();
      expect(refused.status).toBe(503);
      expect(refused.headers['retry-after']).toBeDefined();
      await withAdmin((admin) => admin.query(`ALTER DATABASE "${name}" ALLOW_CONNECTIONS true`));
      const retry = await send(chain, 'cut-key');
      expect(retry.status).toBe(201);
      expect(retry.headers['idempotent-replayed']).toBeUndefined();
      expect((await send(chain, 'cut-key')).headers['idempotent-replayed']).toBe('true');
      expect(await countIn(chain)).toBe(2);
    });
  },
);
