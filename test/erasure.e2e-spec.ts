import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lockLegalHolds } from '@app/database';
import { canonicalJson } from '@app/hashing';
import { run } from '../apps/cli/src/cli';
import { AppModule } from '../apps/api/src/app.module';
import type { EventView } from '../apps/api/src/events/dto/event.view';
import { ADMIN_KEYS, adminBootstrapKeys, rowsContaining } from './support/admin-keys';
import { answerHash } from './support/answer-hash';
import { CapturedLogs, capturingLogs } from './support/captured-logs';
import { assertChainIntact } from './support/chain-check';
import { PGLITE_FOLDER } from './support/postgres';
import { bearer, exportJsonText, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';

/** Every file under `dir` but the embedded database's own (scrubbed within 60 s of an erasure: erasure-residue.e2e-spec.ts). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === PGLITE_FOLDER || name === 'socket') return [];
    return statSync(path).isDirectory() ? filesUnder(path) : [path];
  });
}

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** Erasure (docs/contract.md §17). */
describe('POST /v1/erasures, GET /v1/erasures', () => {
  let t: TestApp;
  const logs = new CapturedLogs();
  beforeAll(async () => {
    t = await startTestApp(
      { bootstrapKeys: adminBootstrapKeys(), logLevel: 'info' },
      undefined,
      AppModule,
      capturingLogs(logs),
    );
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, key: string = KEYS.acme) =>
    t
      .http()
      .get(path)
      .set(...bearer(key));
  const append = async (body: object, headers: Record<string, string> = {}): Promise<EventView> =>
    (
      await t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .set(headers)
        .send(body)
        .expect(201)
    ).body.data as EventView;
  const erase = (body: object, key: string = ADMIN_KEYS.acmeAdmin) =>
    t
      .http()
      .post('/v1/erasures')
      .set(...bearer(key))
      .send(body);

  it('erases a person’s values and salts everywhere, and every hash, proof and verification stays valid', async () => {
    const email = 'zoe.erasable@example.com';
    const ip = '203.0.113.77';
    const body = { actor: email, action: 'user.login', context: { ip, ua: 'Firefox' }, chain: 'gdpr' };
    const target = await append(body, { 'Idempotency-Key': 'erase-me-1' });
    const others = [
      await append({
        actor: 'someone@example.com',
        action: 'user.login',
        context: { ip: '198.51.100.1' },
        chain: 'gdpr',
      }),
      await append({ actor: email, action: 'doc.read', resource: 'doc:7', context: { ip }, chain: 'gdpr-2' }),
    ];
    const actorSalt = target.hashing!.salts.actor!;
    const ipSalt = target.hashing!.salts.context!.ip!;
    const checkpointBefore = (await get(`/v1/chain/${target.chain.id}/checkpoint`).expect(200)).text;

    const res = await erase({
      q: `actor:"${email}"`,
      fields: ['actor', 'context.ip'],
      reason: 'GDPR Art. 17 #4711',
    }).expect(200);
    expect(res.body.data).toEqual({
      id: expect.stringMatching(/^era_[0-9A-HJKMNP-TV-Z]{26}$/),
      at: expect.any(String),
      events: 2,
      fields: ['actor', 'context.ip'],
      skipped: 0,
    });

    // The event reads with the fields erased, its hash unchanged and recomputable from what remains.
    const after = (await get(`/v1/events/${target.id}`).expect(200)).body.data as EventView;
    expect(after).toMatchObject({ id: target.id, actor: null, context: { ua: 'Firefox' }, hash: target.hash });
    expect(after.erased).toEqual(['actor', 'context.ip']);
    expect(after.hashing!.salts).toEqual({ context: { ua: target.hashing!.salts.context!.ua } });
    expect(Object.keys(after.hashing!.commitments).sort()).toEqual(['actor', 'context']);
    expect(answerHash(after)).toBe(target.hash);
    const untouched = (await get(`/v1/events/${others[0]!.id}`).expect(200)).body.data;
    expect(untouched).toEqual(others[0]);

    // Every verification passes: one event, the whole chain, the stored rows, the proof, and the CLI's verify-export.
    const verdict = (await get(`/v1/events/${target.id}/verify`).expect(200)).body.data;
    expect(verdict).toMatchObject({ valid: true, erased: ['actor', 'context.ip'] });
    expect((await get(`/v1/chain/${target.chain.id}/verify`).expect(200)).body.data.valid).toBe(true);
    expect(await assertChainIntact(t.dataSource, target.chain.id)).toBe(2);
    expect((await get(`/v1/events/${target.id}/proof`).expect(200)).body.data.eventHash).toBe(target.hash);
    const work = mkdtempSync(join(tmpdir(), 'erasure-'));
    try {
      writeFileSync(join(work, 'export.json'), await exportJsonText(t, KEYS.acme, target.chain.id));
      writeFileSync(join(work, 'checkpoint.txt'), checkpointBefore);
      writeFileSync(join(work, 'key.txt'), (await get('/v1/checkpoint-key').expect(200)).text);
      let out = '';
      const code = await run(
        [
          'verify-export',
          join(work, 'export.json'),
          '--checkpoint',
          join(work, 'checkpoint.txt'),
          '--key',
          join(work, 'key.txt'),
        ],
        { out: (s) => (out += s), err: (s) => (out += s), env: {} },
      );
      expect({ code, out }).toMatchObject({ code: 0 });
    } finally {
      rmSync(work, { recursive: true, force: true });
    }

    // q finds it no more.
    expect((await get(`/v1/events?q=${encodeURIComponent(`actor:"${email}"`)}`).expect(200)).body.data).toEqual([]);
    expect((await get(`/v1/events?q=${encodeURIComponent(`context.ip:"${ip}"`)}`).expect(200)).body.data).toEqual([]);

    // An idempotent replay of the original append answers the event as it now is.
    const replay = await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .set('Idempotency-Key', 'erase-me-1')
      .send(body)
      .expect(201);
    expect(replay.body.data).toEqual(after);

    // _audit records the erasure without the query or a value.
    const audit = (await get(`/v1/events?q=${encodeURIComponent('action:erasure.done')}`).expect(200)).body
      .data as EventView[];
    expect(audit.map((e) => e.resource)).toContain(res.body.data.id);
    const record = audit.find((e) => e.resource === res.body.data.id)!;
    expect(record.context).toEqual({ events: 2, fields: ['actor', 'context.ip'], reason: 'GDPR Art. 17 #4711' });

    // Nothing of the values, their salts, or an unsalted hash of them is left: tables, DATA_DIR, logs.
    const secrets = [
      email,
      ip,
      actorSalt,
      ipSalt,
      sha256(email),
      sha256(canonicalJson(email)),
      sha256(canonicalJson(body)),
    ];
    for (const secret of secrets) {
      expect(await rowsContaining((sql, params) => t.dataSource.query(sql, params), secret)).toEqual([]);
      for (const file of filesUnder(t.config.dataDir)) expect(readFileSync(file).includes(secret)).toBe(false);
      expect(logs.text).not.toContain(secret);
    }

    // The erasure is listed, never with its query.
    const listed = (await get('/v1/erasures', ADMIN_KEYS.acmeAdmin).expect(200)).body.data;
    expect(listed[0]).toEqual({
      id: res.body.data.id,
      at: res.body.data.at,
      keyId: expect.any(String),
      events: 2,
      fields: ['actor', 'context.ip'],
      reason: 'GDPR Art. 17 #4711',
    });
    expect(JSON.stringify(listed)).not.toContain(email);
  });

  it('refuses what it cannot do: bad fields, never-erasable ones, no term, version-1 chains, held events, other accounts', async () => {
    await append({ actor: 'held@example.com', action: 'a.b', chain: 'held-chain' });
    const q = 'actor:"held@example.com"';
    expect((await erase({ q, fields: ['email'], reason: 'r' }).expect(400)).body.error.details.fields[0].field).toBe(
      'fields',
    );
    expect((await erase({ q, fields: ['action'], reason: 'r' }).expect(422)).body.error.code).toBe('NOT_ERASABLE');
    expect((await erase({ q, fields: ['timestamp', 'actor'], reason: 'r' }).expect(422)).body.error.code).toBe(
      'NOT_ERASABLE',
    );
    await erase({ q: '   ', fields: ['actor'], reason: 'r' }).expect(400);
    await erase({ q, fields: ['actor'], reason: '' }).expect(400);
    await erase({ q, fields: ['actor'], reason: 'r'.repeat(513) }).expect(400);
    await erase({ q, fields: [], reason: 'r' }).expect(400);
    // Scopes: a read or ingest key may not; an operator must name the account; an admin only its own.
    await erase({ q, fields: ['actor'], reason: 'r' }, KEYS.acmeReadOnly).expect(403);
    await erase({ q, fields: ['actor'], reason: 'r' }, ADMIN_KEYS.operator).expect(400);
    const [acme] = await t.dataSource.query<{ id: string }[]>(
      `SELECT audit_uuid_ulid('acc', id) AS id FROM accounts WHERE name = 'acme'`,
    );
    await erase({ q, fields: ['actor'], reason: 'r', accountId: acme!.id }, ADMIN_KEYS.globexAdmin).expect(404);

    // A held chain: 409, nothing changed.
    const chain = (await get('/v1/chains?name=held-chain').expect(200)).body.data[0];
    await t
      .http()
      .put(`/v1/chain/${chain.id}/legal-hold`)
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .send({ hold: true, reason: 'litigation' })
      .expect(200);
    expect((await erase({ q, fields: ['actor'], reason: 'r' }).expect(409)).body.error.code).toBe('CONFLICT');
    expect((await get(`/v1/events?q=${encodeURIComponent(q)}`).expect(200)).body.data).toHaveLength(1);

    // A version-1 chain: 422 naming it, unless allowPartial (then skipped); an operator naming the account may.
    await t.dataSource.query(
      `INSERT INTO chains (id, account_id, name, hash_version) VALUES (audit_ulid_uuid('chn_01KAR2Y6T0F5M3Q8W9Z1B4C7E3'), audit_ulid_uuid($1), 'v1-era', 1)`,
      [acme!.id],
    );
    await append({ actor: 'mixed@example.com', action: 'a.b', chain: 'v1-era' });
    await append({ actor: 'mixed@example.com', action: 'a.b', chain: 'v2-era' });
    const mixed = { q: 'actor:"mixed@example.com"', fields: ['actor'], reason: 'r' };
    const refused = (await erase(mixed).expect(422)).body.error;
    expect(refused).toMatchObject({ code: 'NOT_ERASABLE', details: { chains: ['chn_01KAR2Y6T0F5M3Q8W9Z1B4C7E3'] } });
    const partial = (
      await erase({ ...mixed, allowPartial: true, accountId: acme!.id }, ADMIN_KEYS.operator).expect(200)
    ).body.data;
    expect(partial).toMatchObject({ events: 1, skipped: 1 });
  });

  (usingPostgres() ? it : it.skip)('waits for a legal hold being placed, then refuses what it now holds', async () => {
    await append({ actor: 'race@example.com', action: 'a.b', chain: 'race-chain' });
    const chain = (await get('/v1/chains?name=race-chain').expect(200)).body.data[0];
    const [acme] = await t.dataSource.query<{ id: string }[]>(
      `SELECT audit_uuid_ulid('acc', id) AS id FROM accounts WHERE name = 'acme'`,
    );
    // A hold change in flight, as RetentionService makes it: the account's hold lock, then the row.
    const hold = t.dataSource.createQueryRunner();
    await hold.connect();
    await hold.startTransaction();
    try {
      await lockLegalHolds(acme!.id, hold.manager);
      await hold.query(
        `UPDATE chains SET legal_hold = true, legal_hold_reason = 'race', legal_hold_by = 'admin' WHERE id = audit_ulid_uuid($1)`,
        [chain.id],
      );
      let answered = false;
      const erasure = erase({ q: 'actor:"race@example.com"', fields: ['actor'], reason: 'r' }).then((res) => {
        answered = true;
        return res;
      });
      await new Promise((resolve) => setTimeout(resolve, 500));
      expect(answered).toBe(false);
      await hold.commitTransaction();
      expect((await erasure).status).toBe(409);
    } finally {
      if (hold.isTransactionActive) await hold.rollbackTransaction();
      await hold.release();
    }
  });

  it('finds a value put back beside its kept commitment (a superuser’s edit) as an altered event, not an error', async () => {
    const e = await append({ actor: 'back@example.com', action: 'a.b', chain: 'put-back' });
    await erase({ q: 'actor:"back@example.com"', fields: ['actor'], reason: 'r' }).expect(200);
    await t.dataSource.transaction(async (m) => {
      // Every guard silenced, the erasure record's trigger too (it fires in replica mode and refuses a value beside its commitment).
      await m.query('SET LOCAL session_replication_role = replica');
      await m.query('ALTER TABLE events DISABLE TRIGGER trg_events_erasure_record');
      await m.query(`UPDATE events SET actor = 'back@example.com' WHERE id = audit_ulid_uuid($1)`, [e.id]);
      await m.query('ALTER TABLE events ENABLE ALWAYS TRIGGER trg_events_erasure_record');
    });
    const verdict = (await get(`/v1/events/${e.id}/verify`).expect(200)).body.data;
    expect(verdict).toMatchObject({ valid: false, computedHash: null });
    expect(verdict.errors[0]).toMatch(/determine no hash/);
    const whole = (await get(`/v1/chain/${e.chain.id}/verify`).expect(200)).body.data;
    expect(whole).toMatchObject({ valid: false, firstInvalidPosition: 1 });
  });

  it('is the only way to change an event: the database refuses any other UPDATE, and an erasure that changes a hash', async () => {
    const e = await append({ actor: 'db@example.com', action: 'a.b', context: { k: 1 }, chain: 'db-guard' });
    await expect(
      t.dataSource.query(`UPDATE events SET actor = NULL WHERE id = audit_ulid_uuid($1)`, [e.id]),
    ).rejects.toThrow(/append-only/);
    // Even with the gate opened by hand (it wants an erasure's id), the statement must be an erasure: a changed action is refused.
    await expect(
      t.dataSource.transaction(async (m) => {
        await m.query(`SELECT set_config('audit.erasure', 'era_01KAR2Y6T0F5M3Q8W9Z1B4C7E3', true)`);
        await m.query(
          `UPDATE events SET action = 'x.y', salt_seed = NULL, erasure = '{"salts":{},"commitments":{}}' WHERE id = audit_ulid_uuid($1)`,
          [e.id],
        );
      }),
    ).rejects.toThrow(/only an erasure/);
    // And so is nulling a field without keeping its commitment.
    await expect(
      t.dataSource.transaction(async (m) => {
        await m.query(`SELECT set_config('audit.erasure', 'era_01KAR2Y6T0F5M3Q8W9Z1B4C7E3', true)`);
        await m.query(
          `UPDATE events SET actor = NULL, salt_seed = NULL, erasure = '{"salts":{},"commitments":{}}' WHERE id = audit_ulid_uuid($1)`,
          [e.id],
        );
      }),
    ).rejects.toThrow(/only an erasure/);
    expect((await get(`/v1/events/${e.id}`).expect(200)).body.data).toEqual(e);
  });
});
