import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Metrics } from '@app/common';
import { run } from '../apps/cli/src/cli';
import { compileSchema } from '../apps/api/src/schemas/schema-compiler';
import { MAX_SCHEMA_ACTIONS } from '../apps/api/src/schemas/schemas.service';
import { ADMIN_KEYS, adminBootstrapKeys } from './support/admin-keys';
import { bearer, freshDatabase, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';

/** A schema whose context must hold a non-negative `amount`. */
const AMOUNT = {
  type: 'object',
  properties: {
    context: { type: 'object', properties: { amount: { type: 'number', minimum: 0 } }, required: ['amount'] },
  },
  required: ['context'],
};

interface StoredView {
  id: string;
  schema?: { action: string; version: number; valid: boolean };
}

/**
 * Action schemas (docs/contract.md §19) on a real database: the routes (validation, scopes, tenancy,
 * `_audit`), the check on single, batch and CLI appends under enforce and warn, the version each
 * stored event records (also while a new version is saved during appends, and across two instances
 * on one database), hostile schemas, the preview, `q` and the metric.
 */
describe('Action schemas', () => {
  let t: TestApp;
  let acme: string;
  let globex: string;

  beforeAll(async () => {
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys() });
    acme = await accountOf(t, KEYS.acme);
    globex = await accountOf(t, KEYS.globex);
  });
  afterAll(async () => {
    await t.close();
  });

  const path = (account: string, rest = '') => `/v1/accounts/${account}/schemas${rest}`;
  const put = (action: string, body: unknown, key: string = ADMIN_KEYS.acmeAdmin, account = acme, app = t) =>
    app
      .http()
      .put(path(account, `/${encodeURIComponent(action)}`))
      .set(...bearer(key))
      .send(body as object);
  const append = (event: object, key: string = KEYS.acme, app = t) =>
    app
      .http()
      .post('/v1/events')
      .set(...bearer(key))
      .send(event);
  const batch = (events: object[], key: string = KEYS.acme) =>
    t
      .http()
      .post('/v1/events/batch')
      .set(...bearer(key))
      .send({ events });
  const search = async (q: string, key: string = KEYS.acme): Promise<StoredView[]> =>
    (
      await t
        .http()
        .get('/v1/events')
        .query({ q, limit: 200 })
        .set(...bearer(key))
        .expect(200)
    ).body.data;
  const countOf = async (action: string): Promise<number> =>
    (await t.dataSource.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM events WHERE action = $1`, [action]))[0]
      .n;

  describe('the routes', () => {
    it('PUT makes versions 1, 2, …; GET lists, shows one with its versions, and each version', async () => {
      const first = await put('route.one', { schema: AMOUNT, mode: 'warn' }).expect(201);
      expect(first.body.data).toEqual({
        action: 'route.one',
        version: 1,
        mode: 'warn',
        schema: AMOUNT,
        createdAt: expect.stringMatching(/Z$/),
        keyId: expect.stringMatching(/^key_/),
      });
      const second = await put('route.one', { schema: { type: 'object' }, mode: 'enforce' }).expect(201);
      expect(second.body.data).toMatchObject({ version: 2, mode: 'enforce', schema: { type: 'object' } });
      await put('route.two.*', { schema: { type: 'object' }, mode: 'warn' }).expect(201);

      const admin = (url: string, key: string = ADMIN_KEYS.acmeAdmin) =>
        t
          .http()
          .get(url)
          .set(...bearer(key));
      const list = (await admin(path(acme)).expect(200)).body.data as { action: string; version: number }[];
      expect(list.filter((s) => s.action.startsWith('route.'))).toEqual([
        expect.objectContaining({ action: 'route.one', version: 2 }),
        expect.objectContaining({ action: 'route.two.*', version: 1 }),
      ]);
      const one = (await admin(path(acme, '/route.one')).expect(200)).body.data;
      expect(one).toMatchObject({ action: 'route.one', version: 2, mode: 'enforce' });
      expect(one.versions).toEqual([
        { version: 1, mode: 'warn', createdAt: expect.any(String), keyId: expect.stringMatching(/^key_/) },
        { version: 2, mode: 'enforce', createdAt: expect.any(String), keyId: expect.stringMatching(/^key_/) },
      ]);
      expect((await admin(path(acme, '/route.one/versions/1')).expect(200)).body.data).toMatchObject({
        version: 1,
        schema: AMOUNT,
      });
      await admin(path(acme, '/route.one/versions/3')).expect(404);
      const bad = await admin(path(acme, '/route.one/versions/x')).expect(400);
      expect(bad.body.error.details.fields[0].field).toBe('n');
      await admin(path(acme, '/route.none')).expect(404);
      // An operator reads any account's; nobody reads another account's.
      await admin(path(acme, '/route.one'), ADMIN_KEYS.operator).expect(200);
      await admin(path(acme, '/route.one'), ADMIN_KEYS.globexAdmin).expect(404);
      await admin(path(acme), ADMIN_KEYS.globexAdmin).expect(404);
    });

    it('scopes: admin of the account or operator; ingest and read keys 403; another account or none 404', async () => {
      const body = { schema: { type: 'object' }, mode: 'warn' };
      await put('scope.x', body, KEYS.acmeIngestOnly).expect(403);
      await put('scope.x', body, KEYS.acmeReadOnly).expect(403);
      await put('scope.x', body, ADMIN_KEYS.globexAdmin).expect(404);
      await put('scope.x', body, ADMIN_KEYS.acmeAdmin, globex).expect(404);
      await put('scope.x', body, ADMIN_KEYS.operator, 'acc_01KAR2Y6T0F5M3Q8W9Z1B4C7D2').expect(404);
      await put('scope.x', body, ADMIN_KEYS.operator, 'not-an-account').expect(404);
      await put('scope.x', body, ADMIN_KEYS.operator, globex).expect(201);
      await t
        .http()
        .get(path(acme))
        .set(...bearer(KEYS.acmeReadOnly))
        .expect(403);
      await t
        .http()
        .delete(path(acme, '/scope.x'))
        .set(...bearer(ADMIN_KEYS.globexAdmin))
        .expect(404);
      expect(await t.dataSource.query(`SELECT 1 FROM action_schemas WHERE action = 'scope.x'`)).toHaveLength(1);
    });

    it('re-checks its caller in its transaction (P5): a key revoked a moment ago elsewhere saves and deletes nothing', async () => {
      const made = (
        await t
          .http()
          .post(`/v1/accounts/${acme}/keys`)
          .set(...bearer(ADMIN_KEYS.acmeAdmin))
          .send({ name: 'schema-soon-revoked', scopes: ['admin'] })
          .expect(201)
      ).body.data as { id: string; secret: string };
      await put('revoked.x', { schema: AMOUNT, mode: 'warn' }, made.secret).expect(201);
      // Known valid to this instance (cached), then revoked by "another instance": in the database only.
      await t.dataSource.query(`UPDATE api_keys SET revoked_at = now() WHERE id = $1`, [made.id]);
      await put('revoked.x', { schema: AMOUNT, mode: 'enforce' }, made.secret).expect(401);
      await t
        .http()
        .delete(path(acme, '/revoked.x'))
        .set(...bearer(made.secret))
        .expect(401);
      expect(await t.dataSource.query(`SELECT version FROM action_schemas WHERE action = 'revoked.x'`)).toEqual([
        { version: 1 },
      ]);
    });

    it('validation: mode, schema (null, not an object, over 64 KiB: 400 not 413), action, extra members, query', async () => {
      const fieldOf = async (res: Promise<{ body: { error: { details: { fields: { field: string }[] } } } }>) =>
        (await res).body.error.details.fields.map((f) => f.field);
      expect(await fieldOf(put('v.x', { schema: AMOUNT }).expect(400))).toEqual(['mode']);
      expect(await fieldOf(put('v.x', { schema: AMOUNT, mode: 'strict' }).expect(400))).toEqual(['mode']);
      expect(await fieldOf(put('v.x', { schema: null, mode: 'warn' }).expect(400))).toEqual(['schema']);
      expect(await fieldOf(put('v.x', { schema: [1], mode: 'warn' }).expect(400))).toEqual(['schema']);
      expect(await fieldOf(put('v.x', { schema: {}, mode: 'warn', extra: 1 }).expect(400))).toEqual(['extra']);
      expect(await fieldOf(put('.*', { schema: {}, mode: 'warn' }).expect(400))).toEqual(['action']);
      expect(await fieldOf(put('x'.repeat(257), { schema: {}, mode: 'warn' }).expect(400))).toEqual(['action']);
      const big = { type: 'object', description: 'd'.repeat(70 * 1024) };
      const tooBig = await put('v.x', { schema: big, mode: 'warn' }).expect(400);
      expect(tooBig.body.error.details.fields).toEqual([
        { field: 'schema', message: expect.stringMatching(/at most 65536 bytes/) },
      ]);
      await t
        .http()
        .put(path(acme, '/v.x'))
        .query({ mode: 'warn' })
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .send({ schema: {}, mode: 'warn' })
        .expect(400);
      expect(await t.dataSource.query(`SELECT 1 FROM action_schemas WHERE action = 'v.x'`)).toEqual([]);
    });

    it('hostile schemas are 400 naming schema: remote $ref, $id, recursion, deep nesting, unknown keywords, backreferences; a 10 MB body 413', async () => {
      let deep: object = { type: 'object' };
      for (let i = 0; i < 17; i++) deep = { properties: { a: deep } };
      const hostile: [object, RegExp][] = [
        [{ $ref: 'https://attacker.example/schema.json' }, /must point into the schema itself/],
        [{ properties: { context: { $ref: 'http://169.254.169.254/latest' } } }, /must point into the schema itself/],
        [{ $id: 'https://example.com/x' }, /\$id/],
        [{ anyOf: [{ $ref: '#' }] }, /reaches itself/],
        [deep, /levels deep/],
        [{ type: 'object', properties: { actor: { type: 'string', patern: 'x' } } }, /unknown keyword/],
        [{ properties: { actor: { pattern: '(a)\\1' } } }, /JSON Schema/],
        [{ properties: { actor: { format: 'not-a-format' } } }, /unknown format/],
      ];
      for (const [schema, message] of hostile) {
        const res = await put('hostile.x', { schema, mode: 'enforce' }).expect(400);
        expect(res.body.error.details.fields).toEqual([{ field: 'schema', message: expect.stringMatching(message) }]);
      }
      const huge = JSON.stringify({ schema: { description: 'x'.repeat(10 * 1024 * 1024) }, mode: 'warn' });
      await t
        .http()
        .put(path(acme, '/hostile.x'))
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .set('Content-Type', 'application/json')
        .send(huge)
        .expect(413);
      expect(await t.dataSource.query(`SELECT 1 FROM action_schemas WHERE action = 'hostile.x'`)).toEqual([]);
    });

    it('DELETE adds a version whose schema is null (nothing lost); appends are then unchecked; again: 404', async () => {
      await put('del.x', { schema: AMOUNT, mode: 'enforce' }).expect(201);
      await append({ actor: 'a', action: 'del.x', context: {} }).expect(400);
      const del = (key: string = ADMIN_KEYS.acmeAdmin) =>
        t
          .http()
          .delete(path(acme, '/del.x'))
          .set(...bearer(key));
      const deleted = await del().expect(200);
      expect(deleted.body.data).toMatchObject({ action: 'del.x', version: 2, schema: null, mode: 'enforce' });
      await del().expect(404);
      const after = await append({ actor: 'a', action: 'del.x', context: {} }).expect(201);
      expect(after.body.data.schema).toBeUndefined();
      const versions = await t
        .http()
        .get(path(acme, '/del.x'))
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .expect(200);
      expect(versions.body.data).toMatchObject({ version: 2, schema: null });
      expect(versions.body.data.versions.map((v: { version: number }) => v.version)).toEqual([1, 2]);
      // Versions are append-only in the database too, for every role.
      await expect(t.dataSource.query(`DELETE FROM action_schemas WHERE action = 'del.x'`)).rejects.toThrow();
      await expect(
        t.dataSource.query(`UPDATE action_schemas SET mode = 'warn' WHERE action = 'del.x'`),
      ).rejects.toThrow();
    });

    it('every change is recorded in the account’s _audit chain: schema.changed { action, version, mode }', async () => {
      await put('audited.x', { schema: AMOUNT, mode: 'warn' }).expect(201);
      await put('audited.x', { schema: AMOUNT, mode: 'enforce' }).expect(201);
      await t
        .http()
        .delete(path(acme, '/audited.x'))
        .set(...bearer(ADMIN_KEYS.operator))
        .expect(200);
      const entries = (await search('chain:_audit action:schema.changed resource:audited.x')) as unknown as {
        actor: string;
        context: object;
      }[];
      expect(entries.map((e) => e.context).reverse()).toEqual([
        { action: 'audited.x', version: 1, mode: 'warn' },
        { action: 'audited.x', version: 2, mode: 'enforce' },
        { action: 'audited.x', version: 3, mode: 'deleted' },
      ]);
      expect(entries.every((e) => /^key:key_/.test(e.actor))).toBe(true);
    });
  });

  describe('on append', () => {
    it('enforce: a single event that breaks it is 400 naming the path, the rule and the version; nothing stored', async () => {
      await put('pay.enforce', { schema: AMOUNT, mode: 'enforce' }).expect(201);
      const res = await append({ actor: 'a', action: 'pay.enforce', context: { amount: -3 } }).expect(400);
      expect(res.body.error).toEqual({
        code: 'VALIDATION_ERROR',
        message: expect.any(String),
        details: {
          fields: [{ field: 'context.amount', message: 'must be >= 0 (minimum)', rule: 'minimum' }],
          schema: { action: 'pay.enforce', version: 1 },
        },
      });
      const missing = await append({ actor: 'a', action: 'pay.enforce' }).expect(400);
      expect(missing.body.error.details.fields).toEqual([
        { field: 'context', message: expect.any(String), rule: 'type' },
      ]);
      expect(await countOf('pay.enforce')).toBe(0);
      const ok = await append({ actor: 'a', action: 'pay.enforce', context: { amount: 3 } }).expect(201);
      expect(ok.body.data.schema).toEqual({ action: 'pay.enforce', version: 1, valid: true });
      // Outside the hash: the event verifies as any other.
      const verified = await t
        .http()
        .get(`/v1/events/${ok.body.data.id}/verify`)
        .set(...bearer(KEYS.acme))
        .expect(200);
      expect(verified.body.data.valid).toBe(true);
      const read = await t
        .http()
        .get(`/v1/events/${ok.body.data.id}`)
        .set(...bearer(KEYS.acme))
        .expect(200);
      expect(read.body.data.schema).toEqual({ action: 'pay.enforce', version: 1, valid: true });
    });

    it('enforce: a batch with one bad item is refused whole, naming events[i].path', async () => {
      await put('pay.batch', { schema: AMOUNT, mode: 'enforce' }).expect(201);
      const events = Array.from({ length: 6 }, (_, i) => ({
        actor: 'a',
        action: 'pay.batch',
        chain: `batch-${i % 2}`,
        context: { amount: i === 3 ? -1 : i },
      }));
      const res = await batch(events).expect(400);
      expect(res.body.error.details).toEqual({
        fields: [{ field: 'events[3].context.amount', message: 'must be >= 0 (minimum)', rule: 'minimum' }],
        schema: { action: 'pay.batch', version: 1 },
      });
      expect(await countOf('pay.batch')).toBe(0);
      events[3]!.context.amount = 3;
      const ok = await batch(events).expect(201);
      expect(ok.body.data.map((e: StoredView) => e.schema)).toEqual(
        events.map(() => ({ action: 'pay.batch', version: 1, valid: true })),
      );
    });

    it('warn: stored, marked invalid, counted by audit_schema_violations_total{action}; q finds them', async () => {
      const before = violations(await t.app.get(Metrics).scrape(), 'pay.warn.*');
      await put('pay.warn.*', { schema: AMOUNT, mode: 'warn' }).expect(201);
      const bad = await append({ actor: 'a', action: 'pay.warn.refund', context: { amount: -1 } }).expect(201);
      expect(bad.body.data.schema).toEqual({ action: 'pay.warn.*', version: 1, valid: false });
      const good = await append({ actor: 'a', action: 'pay.warn.refund', context: { amount: 1 } }).expect(201);
      const batchBad = await batch([
        { actor: 'a', action: 'pay.warn.x', context: {} },
        { actor: 'a', action: 'pay.warn.y', context: { amount: 2 } },
      ]).expect(201);
      const none = await append({ actor: 'a', action: 'pay.nowarn', context: { amount: -1 } }).expect(201);
      expect(none.body.data.schema).toBeUndefined();
      expect(violations(await t.app.get(Metrics).scrape(), 'pay.warn.*') - before).toBe(2);

      const ids = (views: StoredView[]) => views.map((e) => e.id).sort();
      expect(ids(await search('schema:invalid action:pay.warn*'))).toEqual(
        [bad.body.data.id, batchBad.body.data[0].id].sort(),
      );
      expect(ids(await search('schema:violated action:pay.warn*'))).toEqual(
        ids(await search('schema:invalid action:pay.warn*')),
      );
      expect(ids(await search('schema:valid action:pay.warn*'))).toEqual(
        [good.body.data.id, batchBad.body.data[1].id].sort(),
      );
      // An event no schema checked matches neither, and every negated term.
      expect(await search('schema:invalid action:pay.nowarn')).toEqual([]);
      expect(await search('schema:valid action:pay.nowarn')).toEqual([]);
      expect(ids(await search('-schema:invalid action:pay.nowarn'))).toEqual([none.body.data.id]);
      const malformed = await t
        .http()
        .get('/v1/events')
        .query({ q: 'schema:broken' })
        .set(...bearer(KEYS.acme))
        .expect(400);
      expect(malformed.body.error.details.fields[0].field).toBe('q');
    });

    it('the longest matching pattern applies: invoice.approve before invoice.*', async () => {
      await put('invoice.*', { schema: AMOUNT, mode: 'enforce' }).expect(201);
      await put('invoice.approve', { schema: { type: 'object', required: ['resource'] }, mode: 'enforce' }).expect(201);
      // invoice.approve's own schema: no amount needed, a resource is.
      const approved = await append({ actor: 'a', action: 'invoice.approve', resource: 'inv:1', context: {} }).expect(
        201,
      );
      expect(approved.body.data.schema).toEqual({ action: 'invoice.approve', version: 1, valid: true });
      const res = await append({ actor: 'a', action: 'invoice.reject', context: {} }).expect(400);
      expect(res.body.error.details.schema).toEqual({ action: 'invoice.*', version: 1 });
      await append({ actor: 'a', action: 'invoice', context: {} }).expect(201);
    });

    it('tenancy: one account’s schema never checks another’s events', async () => {
      await put('tenant.only', { schema: AMOUNT, mode: 'enforce' }).expect(201);
      const other = await append({ actor: 'a', action: 'tenant.only', context: {} }, KEYS.globex).expect(201);
      expect(other.body.data.schema).toBeUndefined();
    });

    it('the CLI’s ingest (through the batch) reports the line an enforced schema refuses, and appends nothing of its batch', async () => {
      await put('cli.ingest', { schema: AMOUNT, mode: 'enforce' }).expect(201);
      await t.app.listen(0, '127.0.0.1');
      const url = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
      const dir = mkdtempSync(join(tmpdir(), 'schema-ingest-'));
      try {
        const file = join(dir, 'events.ndjson');
        const lines = Array.from({ length: 10 }, (_, i) =>
          JSON.stringify({ actor: 'cli', action: 'cli.ingest', context: { amount: i === 6 ? -1 : i } }),
        );
        writeFileSync(file, `${lines.join('\n')}\n`);
        let out = '';
        const code = await run(['ingest', file, '--url', url, '--batch-size', '100'], {
          out: (s) => (out += s),
          err: (s) => (out += s),
          env: { AUDIT_TRAIL_KEY: KEYS.acmeIngestOnly },
        });
        expect({ code, out }).toEqual({ code: 1, out: expect.stringMatching(/line\(s\) rejected \(7\)/) });
        expect(out).toMatch(/context\.amount: must be >= 0/);
        expect(await countOf('cli.ingest')).toBe(0);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });

  it('a version saved while appends are in flight: each event checked against exactly one version, recorded; every append begun after the 201 against the new one', async () => {
    const v1 = { ...AMOUNT }; // amount >= 0
    const v2 = {
      type: 'object',
      properties: { context: { type: 'object', properties: { amount: { type: 'number', maximum: 100 } } } },
    };
    await put('race.x', { schema: v1, mode: 'warn' }).expect(201);
    const amounts = [-5, 500, 50];
    let issued = 0;
    // Every other append of the race carries an Idempotency-Key: one checked again after StaleSchemas
    // is still the same request (its key neither claimed twice nor left in flight).
    const keyed = new Map<string, { body: object; answer: StoredView }>();
    const sendOne = () => {
      const n = issued++;
      const body = { actor: 'r', action: 'race.x', chain: `race-${n % 4}`, context: { amount: amounts[n % 3] } };
      const request = append(body);
      const key = n < 60 && n % 2 === 0 ? `race-key-${n}` : null;
      if (key) request.set('Idempotency-Key', key);
      return request.expect(201).then((res) => {
        const answer = res.body.data as StoredView;
        if (key) keyed.set(key, { body, answer });
        return answer;
      });
    };
    const before = Array.from({ length: 60 }, sendOne);
    await put('race.x', { schema: v2, mode: 'warn' }).expect(201);
    const during = await Promise.all(before);
    expect(keyed.size).toBe(30);
    for (const [key, { body, answer }] of keyed) {
      const again = await append(body).set('Idempotency-Key', key).expect(201);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body.data).toEqual(answer);
    }
    const after = await Promise.all(Array.from({ length: 30 }, sendOne));
    expect(after.every((e) => e.schema?.version === 2)).toBe(true);
    expect(during.every((e) => e.schema?.version === 1 || e.schema?.version === 2)).toBe(true);

    const rows = await t.dataSource.query<{ version: number; schema: object; valid: boolean; context: object }[]>(
      `SELECT s.version, s.schema, e.schema_valid AS valid, e.context
         FROM events e JOIN action_schemas s ON s.id = e.schema_id WHERE e.action = 'race.x'`,
    );
    expect(rows).toHaveLength(90);
    expect(await countOf('race.x')).toBe(90);
    const checks = new Map([1, 2].map((v) => [v, compileSchema(v === 1 ? v1 : v2)]));
    for (const row of rows) {
      expect(row.schema).toEqual(row.version === 1 ? v1 : v2);
      expect(row.valid).toBe(checks.get(row.version)!({ actor: 'r', resource: null, context: row.context }) === null);
    }
    // Both outcomes occur under both versions' rules: the recorded flag is the version's own verdict.
    expect(new Set(rows.map((r) => `${r.version}:${r.valid}`)).size).toBeGreaterThanOrEqual(2);
  });

  it('a catastrophic pattern is bounded: (a+)+$ against 30,000 characters takes milliseconds, and another account appends meanwhile', async () => {
    await put('redos.x', {
      schema: { properties: { context: { properties: { s: { type: 'string', pattern: '^(a+)+$' } } } } },
      mode: 'enforce',
    }).expect(201);
    const globexTimes: number[] = [];
    let stop = false;
    const other = (async () => {
      while (!stop) {
        const started = performance.now();
        await append({ actor: 'g', action: 'redos.x', context: {} }, KEYS.globex).expect(201);
        globexTimes.push(performance.now() - started);
      }
    })();
    const started = performance.now();
    try {
      for (let i = 0; i < 10; i++) {
        const res = await append({ actor: 'a', action: 'redos.x', context: { s: `${'a'.repeat(30_000)}!` } }).expect(
          400,
        );
        expect(res.body.error.details.fields[0]).toMatchObject({ field: 'context.s', rule: 'pattern' });
      }
    } finally {
      stop = true;
      await other;
    }
    const perAppend = (performance.now() - started) / 10;
    expect(perAppend).toBeLessThan(250);
    expect(globexTimes.length).toBeGreaterThan(0);
    expect(Math.max(...globexTimes)).toBeLessThan(1000);
  });

  it('preview: how many of the latest events a candidate would refuse, the first ten; nothing stored; limit bounded', async () => {
    for (let i = 0; i < 15; i++)
      await append({ actor: 'p', action: 'preview.x', context: { amount: i % 3 === 0 ? -i - 1 : i } });
    const preview = (body: object, query: object = {}, key: string = ADMIN_KEYS.acmeAdmin) =>
      t
        .http()
        .post(path(acme, '/preview.x/preview'))
        .query(query)
        .set(...bearer(key))
        .send(body);
    const res = await preview({ schema: AMOUNT }).expect(200);
    expect(res.body.data.checked).toBe(15);
    expect(res.body.data.rejected).toBe(5);
    expect(res.body.data.examples).toHaveLength(5);
    expect(res.body.data.examples[0]).toEqual({
      eventId: expect.stringMatching(/^evt_/),
      field: 'context.amount',
      message: 'must be >= 0 (minimum)',
    });
    const limited = await preview({ schema: AMOUNT }, { limit: 3 }).expect(200);
    expect(limited.body.data.checked).toBe(3);
    const all = await preview({ schema: { properties: { context: { required: ['nothing'] } } } }).expect(200);
    expect(all.body.data).toMatchObject({ checked: 15, rejected: 15 });
    expect(all.body.data.examples).toHaveLength(10);
    const pattern = await t
      .http()
      .post(path(acme, '/preview.*/preview'))
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .send({ schema: AMOUNT })
      .expect(200);
    expect(pattern.body.data).toMatchObject({ checked: 15, rejected: 5 });
    for (const limit of [0, 10_001, 'x']) {
      const bad = await preview({ schema: AMOUNT }, { limit }).expect(400);
      expect(bad.body.error.details.fields[0].field).toBe('limit');
    }
    const hostile = await preview({ schema: { $ref: 'https://x.example/s' } }).expect(400);
    expect(hostile.body.error.details.fields[0].field).toBe('schema');
    await preview({ schema: AMOUNT }, {}, ADMIN_KEYS.globexAdmin).expect(404);
    await preview({ schema: AMOUNT }, {}, KEYS.acme).expect(403);
    expect(await t.dataSource.query(`SELECT 1 FROM action_schemas WHERE action = 'preview.x'`)).toEqual([]);
  });

  it('a preview whose schema is costly on every event gives the event loop back: another account appends meanwhile', async () => {
    const wide = Object.fromEntries(Array.from({ length: 700 }, (_, i) => [`k${i}`, 'yyyyyyyy']));
    await batch(Array.from({ length: 40 }, () => ({ actor: 'p', action: 'costly.x', context: wide }))).expect(201);
    const branches = [
      ...Array.from({ length: 60 }, (_, i) => ({ type: 'string', pattern: `^x${i}` })),
      { type: 'string' },
    ];
    const globexTimes: number[] = [];
    let stop = false;
    const other = (async () => {
      while (!stop) {
        const started = performance.now();
        await append({ actor: 'g', action: 'costly.other', context: {} }, KEYS.globex).expect(201);
        globexTimes.push(performance.now() - started);
      }
    })();
    try {
      const res = await t
        .http()
        .post(path(acme, '/costly.x/preview'))
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .send({ schema: { properties: { context: { additionalProperties: { anyOf: branches } } } } })
        .expect(200);
      // Each check ran into its budget: refused, with rule budget's message.
      expect(res.body.data).toMatchObject({ checked: 40, rejected: 40 });
      expect(res.body.data.examples[0].message).toMatch(/budget/);
    } finally {
      stop = true;
      await other;
    }
    expect(globexTimes.length).toBeGreaterThan(1);
    expect(Math.max(...globexTimes)).toBeLessThan(1000);
  });

  it(`an account has schemas for at most ${MAX_SCHEMA_ACTIONS} actions at once (400 naming action); deleting one makes room`, async () => {
    const current = (
      (
        await t
          .http()
          .get(path(globex))
          .set(...bearer(ADMIN_KEYS.globexAdmin))
          .expect(200)
      ).body.data as { schema: object | null }[]
    ).filter((s) => s.schema !== null).length;
    for (let i = current; i < MAX_SCHEMA_ACTIONS; i++)
      await put(`many.a${i}`, { schema: {}, mode: 'warn' }, ADMIN_KEYS.globexAdmin, globex).expect(201);
    const refused = await put('many.last', { schema: {}, mode: 'warn' }, ADMIN_KEYS.globexAdmin, globex).expect(400);
    expect(refused.body.error.details.fields[0].field).toBe('action');
    // A new version of an action that has one is no new action.
    await put(
      `many.a${MAX_SCHEMA_ACTIONS - 1}`,
      { schema: {}, mode: 'enforce' },
      ADMIN_KEYS.globexAdmin,
      globex,
    ).expect(201);
    await t
      .http()
      .delete(path(globex, `/many.a${MAX_SCHEMA_ACTIONS - 1}`))
      .set(...bearer(ADMIN_KEYS.globexAdmin))
      .expect(200);
    await put('many.last', { schema: {}, mode: 'warn' }, ADMIN_KEYS.globexAdmin, globex).expect(201);
  });

  // Two instances share a PostgreSQL database; the embedded one belongs to one process.
  (usingPostgres() ? it : it.skip)(
    'two instances on one database: a schema saved through one applies at once on the other',
    async () => {
      const database = await freshDatabase();
      const one = await startTestApp({ bootstrapKeys: adminBootstrapKeys() }, database);
      const two = await startTestApp({ bootstrapKeys: adminBootstrapKeys() }, database);
      try {
        const account = await accountOf(one, KEYS.acme);
        // The second instance knows the account has no schema (and keeps knowing it)…
        const unchecked = await append({ actor: 'a', action: 'two.x', context: {} }, KEYS.acme, two).expect(201);
        expect(unchecked.body.data.schema).toBeUndefined();
        // …until a version saved through the first answers 201: the very next append there is checked.
        await put('two.x', { schema: AMOUNT, mode: 'enforce' }, ADMIN_KEYS.acmeAdmin, account, one).expect(201);
        const refused = await append({ actor: 'a', action: 'two.x', context: {} }, KEYS.acme, two).expect(400);
        expect(refused.body.error.details.schema).toEqual({ action: 'two.x', version: 1 });
        const ok = await append({ actor: 'a', action: 'two.x', context: { amount: 1 } }, KEYS.acme, two).expect(201);
        expect(ok.body.data.schema).toEqual({ action: 'two.x', version: 1, valid: true });
        await one
          .http()
          .delete(path(account, '/two.x'))
          .set(...bearer(ADMIN_KEYS.acmeAdmin))
          .expect(200);
        await append({ actor: 'a', action: 'two.x', context: {} }, KEYS.acme, two).expect(201);
      } finally {
        await two.close();
        await one.close();
        rmSync(database.dataDir, { recursive: true, force: true });
      }
    },
  );
});

async function accountOf(app: TestApp, key: string): Promise<string> {
  const res = await app
    .http()
    .get('/v1/me')
    .set(...bearer(key))
    .expect(200);
  return res.body.data.accountId as string;
}

/** audit_schema_violations_total{action="…"} in a scrape (0 when absent). */
function violations({ text }: { text: string }, action: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`audit_schema_violations_total{action="${action}"}`));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}
