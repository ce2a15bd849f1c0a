import type { PoolClient } from 'pg';
import { createHash } from 'node:crypto';
import { ulid } from 'ulid';
import { seededRandom } from './support/seeded-random';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/**
 * Migration 1765700000000: the chain-head trigger reads a chain's events through (chain_id,
 * position), whatever the statistics were when its plans were made. A connection whose first head
 * move came while `events` was empty (a new database) must not read the table at each head move
 * after: before the migration it kept the plan made then (a scan of the table, or of every event of
 * the chain through ix_events_chain_time), and the witnessing bench's ingest ran at half speed.
 */
describe('chain position lookups (migration 1765700000000)', () => {
  let t: TestApp;
  let client!: PoolClient;
  let release: (() => Promise<void>) | undefined;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    if (release) {
      await client.query('RESET plan_cache_mode');
      await release();
    }
    await t.close();
  });

  /** One connection of the service's pool, held from here on (the embedded database has only that one). */
  async function holdConnection(): Promise<void> {
    const runner = t.dataSource.createQueryRunner();
    await runner.connect();
    client = (runner as unknown as { databaseConnection: PoolClient }).databaseConnection;
    release = () => runner.release();
  }

  const digest = (n: number) => createHash('sha256').update(`event ${n}`).digest('hex');
  const genesis = '0'.repeat(64);

  /**
   * Appends positions from..to to the chain in one statement and moves its head there, as SQL. The
   * rows go in shuffled, each at its own millisecond: the chain's events lie in the table in another
   * order than in ix_events_chain_time, as the events of many chains appended together do, so that
   * reading the chain through that index costs a block per event.
   */
  async function append(chain: { id: string; accountId: string }, from: number, to: number, explain = false) {
    const positions = Array.from({ length: to - from + 1 }, (_, i) => from + i);
    const random = seededRandom(from);
    for (let i = positions.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [positions[i], positions[j]] = [positions[j]!, positions[i]!];
    }
    const time = (p: number) => new Date(Date.UTC(2026, 0, 1) + p).toISOString();
    const hash = (p: number) => (p === 0 ? genesis : digest(p));
    await client.query(
      `INSERT INTO events (id, account_id, chain_id, position, actor, action, "timestamp", previous_hash, hash)
       SELECT audit_ulid_uuid('evt_' || w.id), audit_ulid_uuid($1), audit_ulid_uuid($2), w.position, 'sql', 'row.insert', w.at, decode(w.previous, 'hex'), decode(w.hash, 'hex')
         FROM unnest($3::timestamptz[], $4::text[], $5::int8[], $6::text[], $7::text[]) AS w(at, id, position, previous, hash)`,
      [
        chain.accountId,
        chain.id,
        positions.map(time),
        positions.map(() => ulid()),
        positions,
        positions.map((p) => hash(p - 1)),
        positions.map(hash),
      ],
    );
    const update = `UPDATE chains SET last_position = $1, last_hash = decode($2, 'hex'), last_timestamp = $3 WHERE id = audit_ulid_uuid($4)`;
    const values = [to, hash(to), time(to), chain.id];
    if (!explain) return void (await client.query(update, values));
    const { rows } = await client.query<{
      'QUERY PLAN': [{ Plan: { 'Shared Hit Blocks': number; 'Shared Read Blocks': number } }];
    }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${update}`, values);
    const plan = rows[0]!['QUERY PLAN'][0].Plan;
    return plan['Shared Hit Blocks'] + plan['Shared Read Blocks'];
  }

  it("moves a chain's head by reading only the events it moves over, with plans made on an empty table", async () => {
    // A new database: one event (the service makes the account), analyzed as such, and a new chain.
    const made = await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .send({ actor: 'a', action: 'b', chain: 'plans-other' })
      .expect(201);
    await holdConnection();
    const created = await client.query<{ id: string; accountId: string }>(
      `INSERT INTO chains (id, account_id, name) SELECT audit_ulid_uuid($1), account_id, 'plans' FROM chains WHERE id = audit_ulid_uuid($2)
       RETURNING audit_uuid_ulid('chn', id) AS id, audit_uuid_ulid('acc', account_id) AS "accountId"`,
      [`chn_${ulid()}`, (made.body as { data: { chain: { id: string } } }).data.chain.id],
    );
    const chain = created.rows[0]!;
    // No autovacuum in between: its ANALYZE would have the plans made again on the grown table.
    await client.query('ALTER TABLE events SET (autovacuum_enabled = off)');
    await client.query('ANALYZE events');
    // The plans every later head move of this connection keeps, made now on that empty table.
    await client.query('SET plan_cache_mode = force_generic_plan');
    await append(chain, 1, 1);
    await append(chain, 2, 3_000);
    const blocks = await append(chain, 3_001, 3_001, true);
    // The head's row and a few index and heap pages: 15 blocks here. With the plans made on the empty
    // table (before the migration), a scan of the table: 279 on PostgreSQL 15.
    expect(blocks).toBeLessThan(100);
  });
});
