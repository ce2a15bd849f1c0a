import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { DataSource } from 'typeorm';
import { Scope } from '@app/common';
import { dataSourceOptions, runMigrations, setUpServiceRole } from '@app/database';
import { erase } from '@app/hashing';
import type { EventView } from '../apps/api/src/events/dto/event.view';
import { MIGRATIONS } from '../libs/database/src/migrations';
import { ADMIN_KEYS, adminBootstrapKeys } from './support/admin-keys';
import { withAdmin, withClient } from './support/postgres';
import { attemptSql, Sql } from './support/raw-sql';
import { bearer, freshDatabase, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';

/** The grants compose's migrate service applies, and docs/verification.md §7 points to. */
const SCRIPT = readFileSync(join(__dirname, '../libs/database/sql/least-privilege.sql'), 'utf8');
const DAY = 86_400;

/** `url` with another user and password (a role's own login, SCRAM over TCP). */
const asRole = (url: string, role: string, password: string): string => {
  const u = new URL(url);
  u.username = role;
  u.password = password;
  return u.toString();
};

/** The schema's owner's connection (the test's admin URL): what migrates and grants. */
const asOwner = withClient;

/** Migrations by the owner, as `npm run migration:run` or compose's migrate service do. */
async function migrateAsOwner(url: string): Promise<void> {
  const dataSource = await new DataSource(dataSourceOptions({ url, poolSize: 1 })).initialize();
  try {
    await runMigrations(dataSource);
  } finally {
    await dataSource.destroy();
  }
}

async function dropRole(role: string, databaseUrl: string | null): Promise<void> {
  if (databaseUrl) await asOwner(databaseUrl, (c) => c.query(`DROP OWNED BY "${role}"`)).catch(() => undefined);
  await withAdmin((admin) => admin.query(`DROP ROLE IF EXISTS "${role}"`));
}

// PGlite has one superuser session and no roles (docs/verification.md §7).
(usingPostgres() ? describe : describe.skip)('the service on the least-privilege role of least-privilege.sql', () => {
  const role = `audit_svc_${randomBytes(4).toString('hex')}`;
  const password = randomBytes(18).toString('base64url');
  let db: { url: string | null; dataDir: string };
  let t: TestApp;

  beforeAll(async () => {
    db = await freshDatabase();
    await migrateAsOwner(db.url!);
    await asOwner(db.url!, (c) => setUpServiceRole(c, { role, password, script: SCRIPT }));
    t = await startTestApp(
      { databaseMigrations: 'check', retentionSweepSeconds: 0, bootstrapKeys: adminBootstrapKeys() },
      { url: asRole(db.url!, role, password), dataDir: db.dataDir },
    );
  });
  afterAll(async () => {
    await t?.close();
    rmSync(db.dataDir, { recursive: true, force: true });
    await dropRole(role, db.url);
  });

  const req = (key: string = KEYS.acme) => ({
    get: (path: string) =>
      t
        .http()
        .get(path)
        .set(...bearer(key)),
    post: (path: string, body: unknown = {}) =>
      t
        .http()
        .post(path)
        .set(...bearer(key))
        .send(body as object),
    put: (path: string, body: unknown) =>
      t
        .http()
        .put(path)
        .set(...bearer(key))
        .send(body as object),
    delete: (path: string) =>
      t
        .http()
        .delete(path)
        .set(...bearer(key)),
  });

  it('connects as that role, which owns nothing and is no superuser', async () => {
    expect(
      await t.dataSource.query(`SELECT current_user AS name, usesuper FROM pg_user WHERE usename = current_user`),
    ).toEqual([{ name: role, usesuper: false }]);
  });

  it('serves every feature on these grants alone: appends, reads, exports, proofs, keys, retention', async () => {
    // Appends: one, a batch, an idempotent replay.
    const first = (await req().post('/v1/events', { actor: 'u1', action: 'doc.create', chain: 'lp' }).expect(201)).body
      .data as { id: string; chain: { id: string } };
    const chainId = first.chain.id;
    const batch = Array.from({ length: 5 }, (_, i) => ({ actor: `u${i}`, action: 'doc.update', chain: 'lp' }));
    await req().post('/v1/events/batch', { events: batch }).expect(201);
    const once = () =>
      req().post('/v1/events', { actor: 'u9', action: 'doc.once', chain: 'lp' }).set('Idempotency-Key', 'lp-once');
    const claimed = (await once().expect(201)).body.data.id as string;
    expect((await once().expect(201)).body.data.id).toBe(claimed);

    // Reads: one event, lists, search, chains, status, statistics over whole days (event_counts).
    await req().get(`/v1/events/${first.id}`).expect(200);
    expect((await req().get(`/v1/events?chain_id=${chainId}&limit=100`).expect(200)).body.data).toHaveLength(7);
    expect(
      (
        await req()
          .get(`/v1/events?q=${encodeURIComponent('action:doc.update')}`)
          .expect(200)
      ).body.data,
    ).toHaveLength(5);
    await req().get('/v1/chains').expect(200);
    await req().get(`/v1/chain/${chainId}/status`).expect(200);
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + DAY * 1000).toISOString().slice(0, 10);
    await req()
      .get(`/v1/stats/events?after=${today}T00:00:00.000Z&before=${tomorrow}T00:00:00.000Z&group_by=actor`)
      .expect(200);

    // Exports, verification, checkpoints, proofs.
    for (const format of ['json', 'csv'])
      await req()
        .get(`/v1/events/export?format=${format}&after=2000-01-01T00:00:00.000Z&before=${tomorrow}T00:00:00.000Z`)
        .expect(200);
    expect((await req().get(`/v1/events/${first.id}/verify`).expect(200)).body.data.valid).toBe(true);
    expect((await req().get(`/v1/chain/${chainId}/verify`).expect(200)).body.data.valid).toBe(true);
    await req().get(`/v1/chain/${chainId}/checkpoint`).expect(200);
    await req().get(`/v1/events/${first.id}/proof?size=7`).expect(200);
    await req().get(`/v1/chain/${chainId}/consistency?from=3&to=7`).expect(200);

    // Accounts and keys over HTTP: create, use (last_used_at), rotate (expires_at), revoke.
    const account = (await req(ADMIN_KEYS.operator).post('/v1/accounts', { name: 'lp-initech' }).expect(201)).body.data
      .id as string;
    const made = (
      await req(ADMIN_KEYS.operator)
        .post(`/v1/accounts/${account}/keys`, { name: 'lp', scopes: ['ingest', 'read'] })
        .expect(201)
    ).body.data as { id: string; secret: string };
    await req(made.secret).get('/v1/chains').expect(200);
    const rotated = (
      await req(ADMIN_KEYS.operator)
        .post(`/v1/accounts/${account}/keys/${made.id}/rotate`, { overlapSeconds: 0 })
        .expect(201)
    ).body.data as { id: string };
    await req(ADMIN_KEYS.operator).delete(`/v1/accounts/${account}/keys/${rotated.id}`).expect(200);

    // Retention settings, legal hold, and a sweep that prunes (audit_prune_chain, the owner's).
    const acme = (await req().get('/v1/me').expect(200)).body.data.accountId as string;
    await req(ADMIN_KEYS.acmeAdmin).put(`/v1/chain/${chainId}/legal-hold`, { hold: true, reason: 'lp' }).expect(200);
    await req(ADMIN_KEYS.acmeAdmin).put(`/v1/chain/${chainId}/legal-hold`, { hold: false }).expect(200);
    await req(ADMIN_KEYS.acmeAdmin).put(`/v1/accounts/${acme}/legal-hold`, { hold: false }).expect(200);
    await req(ADMIN_KEYS.acmeAdmin).put(`/v1/accounts/${acme}/retention`, { days: null }).expect(200);
    await req(ADMIN_KEYS.acmeAdmin).put(`/v1/chain/${chainId}/retention`, { days: 1 }).expect(200);
    // The clock offset is the owner's alone (docs/verification.md §9): the role's sweep prunes only what is truly old.
    expect((await req(ADMIN_KEYS.operator).post('/v1/retention/sweep').expect(200)).body.data).toEqual({
      chains: 0,
      events: 0,
    });
    expect((await req().get(`/v1/chain/${chainId}/verify`).expect(200)).body.data.valid).toBe(true);
  });

  it('records an erasure the role makes by hand (P2): listed with no key, every erased field held against the database’s record, which the role cannot write or change', async () => {
    const admin = req(ADMIN_KEYS.acmeAdmin);
    const appendOne = async (actor: string) =>
      (
        await req()
          .post('/v1/events', { actor, action: 'a.b', context: { pin: '4821' }, chain: 'by-hand' })
          .expect(201)
      ).body.data as EventView;
    /** The row audit_erase_events takes to erase the actor of `e`, as the service computes it (public ids). */
    const actorErasure = (e: EventView) => {
      const payload = { ...e, chainId: e.chain.id, position: e.chain.position };
      const { event, hashing } = erase(payload, e.hashing!, ['actor']);
      return { id: e.id, actor: true, resource: false, context: event.context, erasure: hashing };
    };
    const accountId = (await req().get('/v1/me').expect(200)).body.data.accountId as string;
    const byHand = await appendOne('by-hand@example.com');
    const n = await t.dataSource.query<{ n: number }[]>(`SELECT audit_erase_events($1, $2::jsonb) AS n`, [
      accountId,
      JSON.stringify([actorErasure(byHand)]),
    ]);
    expect(n).toEqual([{ n: 1 }]);
    const [listed] = (await admin.get('/v1/erasures').expect(200)).body.data;
    expect(listed).toMatchObject({ keyId: null, reason: null, events: 1, fields: ['actor'] });
    expect((await req().get(`/v1/events/${byHand.id}/verify`).expect(200)).body.data).toMatchObject({ valid: true });
    expect((await req().get(`/v1/chain/${byHand.chain.id}/verify`).expect(200)).body.data).toMatchObject({
      valid: true,
    });

    // The record is the database's: the role can neither write, change nor remove a row of it.
    for (const sql of [
      `INSERT INTO erasure_events (account_id, chain_id, position, event_id, fields, erased_at, database_role)
         SELECT account_id, chain_id, position, id, '{resource}', now(), 'x' FROM events LIMIT 1`,
      `INSERT INTO erasures (id, account_id, events, skipped, fields) VALUES ('era_01KAR2Y6T0F5M3Q8W9Z1B4C7E9', audit_ulid_uuid('${accountId}'), 0, 0, '{}')`,
      `UPDATE erasures SET reason = 'x'`,
      `DELETE FROM erasure_events`,
      `TRUNCATE erasure_events`,
    ])
      expect((await attemptSql(t.dataSource, (m) => m.query(sql)))?.code).toBe('42501');

    // An erasure the record does not explain (a superuser silenced its trigger): both verifications say where.
    const unseen = await appendOne('unseen@example.com');
    await asOwner(db.url!, async (c) => {
      await c.query('BEGIN');
      await c.query('ALTER TABLE events DISABLE TRIGGER trg_events_erasure_record');
      await c.query(`SELECT audit_erase_events($1, $2::jsonb)`, [accountId, JSON.stringify([actorErasure(unseen)])]);
      await c.query('ALTER TABLE events ENABLE ALWAYS TRIGGER trg_events_erasure_record');
      await c.query('COMMIT');
    });
    const verdict = (await req().get(`/v1/events/${unseen.id}/verify`).expect(200)).body.data;
    expect(verdict).toMatchObject({ valid: false, erased: ['actor'] });
    expect(verdict.errors).toEqual([
      expect.stringMatching(/position 2 has actor erased, but the database's erasure record/),
    ]);
    const whole = (await req().get(`/v1/chain/${unseen.chain.id}/verify`).expect(200)).body.data;
    expect(whole).toMatchObject({ valid: false, firstInvalidPosition: 2 });
    expect(whole.errors).toEqual([expect.objectContaining({ position: 2, eventId: unseen.id })]);
  });

  it('cannot shadow the tables the database’s functions read with temp tables (attack finding 7, P3): TEMP refused, and with TEMP granted back audit_erase_events still reads the real legal hold', async () => {
    const held = (
      await req().post('/v1/events', { actor: 'held@example.com', action: 'a.b', chain: 'held' }).expect(201)
    ).body.data as EventView;
    const accountId = (await req().get('/v1/me').expect(200)).body.data.accountId as string;
    await asOwner(db.url!, (c) =>
      c.query(
        `UPDATE chains SET legal_hold = true, legal_hold_reason = 'case 7', legal_hold_by = 'operator' WHERE id = audit_id_uuid($1, 'chn')`,
        [held.chain.id],
      ),
    );
    const payload = { ...held, chainId: held.chain.id, position: held.chain.position };
    const { event, hashing } = erase(payload, held.hashing!, ['actor']);
    const row = { id: held.id, actor: true, resource: false, context: event.context, erasure: hashing };
    /** The attack of /tmp/attacks/erase2.sql: temp tables named like the real ones, then the erasure. */
    const shadowThenErase = async (m: Sql) => {
      await m.query(`CREATE TEMP TABLE chains (id uuid, legal_hold boolean)`);
      await m.query(`CREATE TEMP TABLE accounts (id uuid, legal_hold boolean)`);
      await m.query(
        `CREATE TEMP TABLE erasure_events (erasure_id text, account_id uuid, chain_id uuid, position bigint, event_id uuid, fields text[], erased_at timestamptz, database_role text)`,
      );
      await m.query(
        `CREATE TEMP TABLE erasures (id text, account_id uuid, key_id text, events int, skipped int, fields text[], reason text)`,
      );
      await m.query(`SELECT audit_erase_events($1, $2::jsonb)`, [accountId, JSON.stringify([row])]);
    };

    // least-privilege.sql takes TEMPORARY from the role and from PUBLIC, whence it inherited it.
    const refused = await attemptSql(t.dataSource, shadowThenErase);
    expect(refused).toMatchObject({
      code: '42501',
      message: expect.stringMatching(/permission denied to create temporary tables/),
    });

    // Granted back by a superuser: the functions name pg_temp last, so the real chains hold the event.
    const database = new URL(db.url!).pathname.slice(1);
    await withAdmin((admin) => admin.query(`GRANT TEMPORARY ON DATABASE "${database}" TO "${role}"`));
    try {
      const error = await attemptSql(t.dataSource, shadowThenErase);
      expect(error).toMatchObject({ code: '42501', message: expect.stringMatching(/not under legal hold/) });
    } finally {
      await withAdmin((admin) => admin.query(`REVOKE TEMPORARY ON DATABASE "${database}" FROM "${role}"`));
    }
    expect((await req().get(`/v1/events/${held.id}`).expect(200)).body.data.actor).toBe('held@example.com');
  });

  it('reports an event whose stored hashing is malformed as invalid at its position, never a 500 (attack finding 8, P6)', async () => {
    const e = (
      await req().post('/v1/events', { actor: 'm@example.com', action: 'a.b', chain: 'malformed' }).expect(201)
    ).body.data as EventView;
    const accountId = (await req().get('/v1/me').expect(200)).body.data.accountId as string;
    // The record's trigger refuses, to the role, a commitment that is not 64 lowercase hex and an erasure without salts.
    const eraseAs = (erasure: object) => (m: Sql) =>
      m.query(`SELECT audit_erase_events($1, $2::jsonb)`, [
        accountId,
        JSON.stringify([{ id: e.id, actor: true, resource: false, context: null, erasure }]),
      ]);
    for (const erasure of [
      { commitments: { actor: 'c0ffee' } },
      { salts: {}, commitments: { actor: 'C0FFEE'.repeat(10) + 'ABCD' } },
      { commitments: { actor: 'a'.repeat(64) } },
    ])
      expect(await attemptSql(t.dataSource, eraseAs(erasure))).toMatchObject({
        code: '42501',
        message: expect.stringMatching(/a commitment \(64 lowercase hex\) for each erased field/),
      });
    // /tmp/attacks/erase3.sql's erasure: a short commitment and no salts. The owner silences the record's
    // trigger (which refuses it since migration 1766300000000) to store it as an altered row would be.
    await asOwner(db.url!, async (c) => {
      await c.query('BEGIN');
      await c.query('ALTER TABLE events DISABLE TRIGGER trg_events_erasure_record');
      await c.query(`SELECT audit_erase_events($1, $2::jsonb)`, [
        accountId,
        JSON.stringify([
          { id: e.id, actor: true, resource: false, context: null, erasure: { commitments: { actor: 'c0ffee' } } },
        ]),
      ]);
      await c.query('ALTER TABLE events ENABLE ALWAYS TRIGGER trg_events_erasure_record');
      await c.query('COMMIT');
    });
    const verdict = (await req().get(`/v1/events/${e.id}/verify`).expect(200)).body.data;
    expect(verdict).toMatchObject({ valid: false });
    expect(verdict.errors).toEqual([expect.stringMatching(/determine no hash.*the event was altered/)]);
    const whole = (await req().get(`/v1/chain/${e.chain.id}/verify`).expect(200)).body.data;
    expect(whole).toMatchObject({ valid: false, firstInvalidPosition: 1 });
    expect(whole.errors).toEqual([expect.objectContaining({ position: 1, eventId: e.id })]);
  });

  it('follows API_KEYS at a restart (scopes changed, a removed key revoked) on the same grants', async () => {
    await t.close();
    const keys = adminBootstrapKeys()
      .filter((k) => k.key !== KEYS.acmeReadOnly)
      .map((k) => (k.key === KEYS.acmeIngestOnly ? { ...k, scopes: ['ingest', 'read'] as Scope[] } : k));
    t = await startTestApp(
      { databaseMigrations: 'check', retentionSweepSeconds: 0, bootstrapKeys: keys },
      { url: asRole(db.url!, role, password), dataDir: db.dataDir },
    );
    await req(KEYS.acmeReadOnly).get('/v1/chains').expect(401);
    await req(KEYS.acmeIngestOnly).get('/v1/chains').expect(200);
  });

  it.each([
    ['UPDATE events', `UPDATE events SET actor = 'mallory'`, /permission denied for table events/],
    ['DELETE FROM events', `DELETE FROM events`, /permission denied for table events/],
    ['TRUNCATE events', `TRUNCATE events`, /permission denied for table events/],
    ['UPDATE checkpoints', `UPDATE checkpoints SET note = 'x'`, /permission denied for table checkpoints/],
    ['DELETE FROM merkle_nodes', `DELETE FROM merkle_nodes`, /permission denied for table merkle_nodes/],
    ['moving first_position', `UPDATE chains SET first_position = 2`, /permission denied for table chains/],
    ['SET session_replication_role', `SET session_replication_role = replica`, /permission denied to set parameter/],
    ['ALTER TABLE … DISABLE TRIGGER', `ALTER TABLE events DISABLE TRIGGER USER`, /must be owner of table events/],
    ['CREATE TABLE', `CREATE TABLE mallory (id int)`, /permission denied for schema public/],
  ])('refuses %s to the role itself', async (_label, sql, message) => {
    const error = await attemptSql(t.dataSource, (m) => m.query(sql));
    expect(error).toMatchObject({ code: '42501', message: expect.stringMatching(message) });
    expect((await t.dataSource.query(`SELECT count(*)::int AS n FROM events WHERE actor = 'mallory'`))[0].n).toBe(0);
  });
});

(usingPostgres() ? describe : describe.skip)('DATABASE_MIGRATIONS', () => {
  it('check: applies nothing and refuses to start at once while migrations are pending, naming them', async () => {
    const db = await freshDatabase();
    const started = Date.now();
    try {
      const names = MIGRATIONS.map((migration) => migration.name);
      await expect(startTestApp({ databaseMigrations: 'check' }, db)).rejects.toThrow(
        `DATABASE_MIGRATIONS=check: ${names.length} migration(s) pending (${names.join(', ')})`,
      );
      expect(
        await asOwner(db.url!, (c) => c.query(`SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'`)),
      ).toMatchObject({ rows: [{ n: 0 }] });
      // Not retried as an unreachable database is (9 times, 3 s apart): waiting changes nothing.
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      rmSync(db.dataDir, { recursive: true, force: true });
    }
  });

  it('run, on a role that may not change the schema: says to migrate as the owner and use check', async () => {
    const db = await freshDatabase();
    const role = `audit_norun_${randomBytes(4).toString('hex')}`;
    const password = randomBytes(18).toString('base64url');
    await withAdmin((admin) => admin.query(`CREATE ROLE "${role}" LOGIN PASSWORD '${password}'`));
    try {
      await expect(
        startTestApp({ databaseMigrations: 'run' }, { url: asRole(db.url!, role, password), dataDir: db.dataDir }),
      ).rejects.toThrow(
        /permission denied for schema public\. This role may not change the schema: .*DATABASE_MIGRATIONS=check/,
      );
    } finally {
      rmSync(db.dataDir, { recursive: true, force: true });
      await dropRole(role, db.url);
    }
  });
});
