import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { Metrics } from '@app/common';
import { canRunReplica, StreamingReplica } from './support/streaming-replica';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';
import { eventually } from './support/webhook-receiver';

/**
 * DATABASE_READ_URL on a real streaming replica (docs/contract.md §21): a primary and its replica
 * of their own (pg_basebackup -R, about 3 s to start), so replay can be paused. Whatever database
 * the run's other suites use: it needs PostgreSQL 15's programs on the machine (CI's host has
 * them: its `npm test` pass runs this; the Docker e2e image has not, and skips it).
 */
/** An export of every event of the run (they are all appended now). */
const EXPORT_THIS_YEAR = `format=json&after=${new Date(Date.now() - 86_400_000).toISOString()}&before=${new Date(Date.now() + 86_400_000).toISOString()}`;

(canRunReplica() ? describe : describe.skip)('DATABASE_READ_URL: reads on a streaming replica', () => {
  let servers: StreamingReplica;
  let t: TestApp;
  let replica: Client;
  beforeAll(async () => {
    servers = await StreamingReplica.start();
    const admin = new Client({ connectionString: servers.url('primary') });
    await admin.connect();
    await admin.query('CREATE DATABASE audit');
    await admin.end();
    t = await startTestApp(
      { databaseReadUrl: servers.url('replica', 'audit'), readReplicaMaxLagMs: 1000 },
      { url: servers.url('primary', 'audit'), dataDir: mkdtempSync(join(tmpdir(), 'audit-e2e-')) },
    );
    replica = new Client({ connectionString: servers.url('replica', 'audit') });
    await replica.connect();
  }, 60_000);
  afterAll(async () => {
    await replica?.end().catch(() => undefined);
    await t?.close();
    servers?.stop();
  });

  const metric = async (series: string): Promise<number | null> => {
    const { text } = await t.app.get(Metrics).scrape();
    const line = text.split('\n').find((l) => l.startsWith(`${series} `));
    const value = line?.split(' ')[1];
    return value === undefined ? null : value === '+Inf' ? Infinity : Number(value);
  };
  const served = async (side: 'primary' | 'replica') => (await metric(`audit_db_reads_total{side="${side}"}`)) ?? 0;
  const append = (actor: string) =>
    t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .send({ actor, action: 'replica.test', chain: 'replica' })
      .expect(201);
  const list = () =>
    t
      .http()
      .get('/v1/events?limit=100')
      .set(...bearer(KEYS.acme))
      .expect(200);

  it('serves the list and statistics from the replica while it keeps up, and reports its lag', async () => {
    await append('first');
    // Measured once the replica's pool is open (+Inf before: unknown).
    await eventually(async () => expect(await metric('audit_db_replica_lag_seconds')).toBeLessThan(1), 10_000);
    const before = await served('replica');
    await eventually(
      async () => expect((await list()).body.data.map((e: { actor: string }) => e.actor)).toContain('first'),
      5000,
    );
    await t
      .http()
      .get('/v1/stats/events')
      .query({ after: '2026-01-01T00:00:00.000Z', before: '2027-01-01T00:00:00.000Z', group_by: 'action' })
      .set(...bearer(KEYS.acme))
      .expect(200);
    expect(await served('replica')).toBeGreaterThanOrEqual(before + 2);
  });

  it('proofs, the export and whole-chain verification read the replica, never older than what the client was told', async () => {
    await eventually(async () => expect(await metric('audit_db_replica_lag_seconds')).toBeLessThan(1), 10_000);
    const before = await served('replica');
    // Read your writes: each proof asked the moment its 201 arrived, each on the replica (its floor waits for replay).
    for (let i = 0; i < 20; i++) {
      const created = await append(`proof-${i}`);
      const proof = await t
        .http()
        .get(`/v1/events/${created.body.data.id}/proof`)
        .set(...bearer(KEYS.acme))
        .expect(200);
      expect(proof.body.data.position).toBe(created.body.data.chain.position);
      expect(proof.body.data.size).toBeGreaterThanOrEqual(created.body.data.chain.position);
    }
    const last = await append('export-me');
    const exported = await t
      .http()
      .get(`/v1/events/export?${EXPORT_THIS_YEAR}`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    expect(exported.text).toContain(last.body.data.id);
    const chain = last.body.data.chain.id;
    const verified = await t
      .http()
      .get(`/v1/chain/${chain}/verify`)
      .set(...bearer(KEYS.acme))
      .expect(200);
    expect(verified.body.data).toMatchObject({ valid: true, checkedEvents: last.body.data.chain.position });
    // 20 proofs, the export's snapshot, and at least one window of the verification.
    expect(await served('replica')).toBeGreaterThanOrEqual(before + 22);
  });

  it('while replay is paused: an event by id is found at once (the primary), the list goes to the primary once the lag passes the limit, and back when replay resumes', async () => {
    await replica.query('SELECT pg_wal_replay_pause()');
    try {
      const created = await append('while-paused');
      // Something the client was told exists: never 404, whatever the replica's state.
      await t
        .http()
        .get(`/v1/events/${created.body.data.id}`)
        .set(...bearer(KEYS.acme))
        .expect(200);
      await eventually(async () => expect(await metric('audit_db_replica_lag_seconds')).toBeGreaterThan(1), 10_000);
      const primaryBefore = await served('primary');
      const replicaBefore = await served('replica');
      expect((await list()).body.data.map((e: { actor: string }) => e.actor)).toContain('while-paused');
      expect(await served('primary')).toBe(primaryBefore + 1);
      // The proof, the export and the chain's verification of what the replica has not replayed: from the primary.
      await t
        .http()
        .get(`/v1/events/${created.body.data.id}/proof`)
        .set(...bearer(KEYS.acme))
        .expect(200);
      const exported = await t
        .http()
        .get(`/v1/events/export?${EXPORT_THIS_YEAR}`)
        .set(...bearer(KEYS.acme))
        .expect(200);
      expect(exported.text).toContain(created.body.data.id);
      const verified = await t
        .http()
        .get(`/v1/chain/${created.body.data.chain.id}/verify`)
        .set(...bearer(KEYS.acme))
        .expect(200);
      expect(verified.body.data).toMatchObject({ valid: true, checkedEvents: created.body.data.chain.position });
      expect(await served('primary')).toBeGreaterThanOrEqual(primaryBefore + 4);
      expect(await served('replica')).toBe(replicaBefore);
    } finally {
      await replica.query('SELECT pg_wal_replay_resume()');
    }
    await eventually(async () => expect(await metric('audit_db_replica_lag_seconds')).toBeLessThan(1), 10_000);
    const replicaBefore = await served('replica');
    await list();
    expect(await served('replica')).toBe(replicaBefore + 1);
  });

  it('a replica that goes away mid-use: every read is answered, from the primary (last: runs after the others)', async () => {
    await append('before-the-crash');
    await eventually(async () => expect(await metric('audit_db_replica_lag_seconds')).toBeLessThan(1), 10_000);
    const primaryBefore = await served('primary');
    await replica.end();
    servers.stopReplica();
    // The first reads still trust the last measured lag: they fail on the replica and run again on the primary.
    for (let i = 0; i < 5; i++) {
      const res = await list();
      expect(res.body.data.map((e: { actor: string }) => e.actor)).toContain('before-the-crash');
    }
    expect(await served('primary')).toBe(primaryBefore + 5);
    await eventually(async () => expect(await metric('audit_db_replica_lag_seconds')).toBe(Infinity), 10_000);
  });
});
