import { setTimeout as sleep } from 'node:timers/promises';
import request from 'supertest';
import { run } from '../apps/cli/src/cli';
import { adminBootstrapKeys, ADMIN_KEYS } from './support/admin-keys';
import { startChildInstance } from './support/child-instance';
import { bearer, freshDatabase, startTestApp, TestApp, usingPostgres } from './support/test-app';

/** An instance to call: this process's test app, or another process's URL. */
type Instance = TestApp | string;

/*
 * Two instances on one database, and the key CLI beside them: PostgreSQL only (the embedded
 * database takes one instance and one connection, so neither a second instance nor the CLI can
 * reach it while the app runs).
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;

describeOnPostgres('keys across instances and the CLI (PostgreSQL)', () => {
  let first: TestApp;
  let second: string;
  let stopSecond: () => Promise<void>;
  let acmeId = '';
  beforeAll(async () => {
    const database = await freshDatabase();
    first = await startTestApp({ bootstrapKeys: adminBootstrapKeys() }, database);
    const apiKeys = adminBootstrapKeys()
      .map((k) => `${k.account}:${k.key}:${k.scopes.join('+')}`)
      .join(',');
    ({ url: second, stop: stopSecond } = await startChildInstance({
      DATABASE_URL: database.url!,
      API_KEYS: apiKeys,
      RATE_LIMIT_PER_SECOND: '0',
    }));
    acmeId = (
      await first
        .http()
        .get('/v1/me')
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .expect(200)
    ).body.data.accountId;
  });
  afterAll(async () => {
    await stopSecond();
    await first.close();
  });

  const http = (app: Instance) => (typeof app === 'string' ? request(app) : app.http());
  const chains = (app: Instance, key: string) =>
    http(app)
      .get('/v1/chains')
      .set(...bearer(key));
  const makeKey = async (app: Instance, scopes: string[] = ['read']) =>
    (
      await http(app)
        .post(`/v1/accounts/${acmeId}/keys`)
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .send({ name: 'multi', scopes })
        .expect(201)
    ).body.data as { id: string; secret: string };

  /** How long until `app` refuses `key` (polling every 50 ms), in ms; fails the test after 10 s. */
  async function refusedWithin(app: Instance, key: string): Promise<number> {
    const started = Date.now();
    while (Date.now() - started < 10_000) {
      const res = await chains(app, key);
      if (res.status === 401) return Date.now() - started;
      expect(res.status).toBe(200);
      await sleep(50);
    }
    throw new Error('the key was still accepted after 10 s');
  }

  it('a key revoked through the first instance is refused by the second within 5 s', async () => {
    const made = await makeKey(first);
    await chains(second, made.secret).expect(200); // the second instance caches it now
    await first
      .http()
      .delete(`/v1/accounts/${acmeId}/keys/${made.id}`)
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .expect(200);
    await chains(first, made.secret).expect(401); // at once where it was revoked
    expect(await refusedWithin(second, made.secret)).toBeLessThanOrEqual(5_000);
  });

  it('a rotation with no overlap reaches the second instance within 5 s', async () => {
    const made = await makeKey(first);
    await chains(second, made.secret).expect(200);
    await first
      .http()
      .post(`/v1/accounts/${acmeId}/keys/${made.id}/rotate`)
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .send({ overlapSeconds: 0 })
      .expect(201);
    expect(await refusedWithin(second, made.secret)).toBeLessThanOrEqual(5_000);
  });

  it('an admin key revoked on the first instance cannot mint a key on the second, whose cache still holds it (401)', async () => {
    const leaked = (
      await first
        .http()
        .post(`/v1/accounts/${acmeId}/keys`)
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .send({ name: 'leaked', scopes: ['admin'] })
        .expect(201)
    ).body.data as { id: string; secret: string };
    await http(second)
      .get('/v1/me')
      .set(...bearer(leaked.secret))
      .expect(200); // the second instance caches it now
    await first
      .http()
      .delete(`/v1/accounts/${acmeId}/keys/${leaked.id}`)
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .expect(200);
    const minted = await http(second)
      .post(`/v1/accounts/${acmeId}/keys`)
      .set(...bearer(leaked.secret))
      .send({ name: 'replacement', scopes: ['ingest', 'read', 'admin'] });
    expect(minted.status).toBe(401);
    const names = (
      await http(first)
        .get(`/v1/accounts/${acmeId}/keys?limit=200`)
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .expect(200)
    ).body.data.map((k: { name: string }) => k.name);
    expect(names).not.toContain('replacement');
  });

  async function cli(...args: string[]): Promise<{ code: number; out: string }> {
    let out = '';
    const code = await run(args, {
      out: (s) => (out += s),
      err: (s) => (out += s),
      env: { DATABASE_URL: first.config.databaseUrl! },
    });
    return { code, out };
  }

  it('a key made by the CLI works over HTTP on both instances, is listed there, and the API revokes it', async () => {
    const created = await cli('keys', 'create', '--account', 'acme', '--scopes', 'read', '--name', 'from-cli');
    expect(created.code).toBe(0);
    const secret = /^(ats_\S+)$/m.exec(created.out)![1]!;
    const id = /Created key (key_\w{26})/.exec(created.out)![1]!;
    await chains(first, secret).expect(200);
    await chains(second, secret).expect(200);
    const listed = (
      await http(second)
        .get(`/v1/accounts/${acmeId}/keys`)
        .set(...bearer(ADMIN_KEYS.acmeAdmin))
        .expect(200)
    ).body.data as { id: string; name: string }[];
    expect(listed).toContainEqual(expect.objectContaining({ id, name: 'from-cli' }));
    await first
      .http()
      .delete(`/v1/accounts/${acmeId}/keys/${id}`)
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .expect(200);
    await chains(first, secret).expect(401);
  });

  it('a key made by the API is listed and revoked by the CLI, and refused everywhere', async () => {
    const made = await makeKey(first, ['ingest', 'read']);
    await chains(second, made.secret).expect(200);
    expect((await cli('keys', 'list', '--account', 'acme')).out).toContain(made.id);
    expect((await cli('keys', 'revoke', made.id)).code).toBe(0);
    expect(await refusedWithin(first, made.secret)).toBeLessThanOrEqual(5_000);
    expect(await refusedWithin(second, made.secret)).toBeLessThanOrEqual(5_000);
  });
});
