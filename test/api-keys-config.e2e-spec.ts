import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestApiKey } from '@app/auth';
import { parseApiKeys } from '@app/common';
import { bearer, freshDatabase, startTestApp, TestApp } from './support/test-app';

const keys = {
  full: 'cfg-full-0123456789abcdef0123',
  dropped: 'cfg-dropped-0123456789abcdef0',
  admin: 'cfg-admin-0123456789abcdef012',
};
const apiKeys = (...entries: string[]) => parseApiKeys(entries.join(','), []);

/** Issue 18, item 12: keys from API_KEYS follow the list at every start; keys made by the API are untouched. */
describe('API_KEYS at every start', () => {
  let database: Awaited<ReturnType<typeof freshDatabase>>;
  let t: TestApp | null = null;
  beforeAll(async () => {
    database = await freshDatabase();
  });
  afterEach(async () => {
    await t?.close();
    t = null;
  });
  afterAll(() => rmSync(database.dataDir, { recursive: true, force: true }));

  const start = async (...entries: string[]) =>
    (t = await startTestApp({ bootstrapKeys: apiKeys(...entries) }, database));
  const append = (app: TestApp, key: string) =>
    app
      .http()
      .post('/v1/events')
      .set(...bearer(key))
      .send({ actor: 'a', action: 'b' });
  let apiMade = '';

  it('first start: every listed key works with its scopes; the API makes a key of its own', async () => {
    const app = await start(`acme:${keys.full}`, `acme:${keys.dropped}`, `acme:${keys.admin}:admin`);
    await append(app, keys.full).expect(201);
    await append(app, keys.dropped).expect(201);
    const accountId = (
      await app
        .http()
        .get('/v1/me')
        .set(...bearer(keys.admin))
        .expect(200)
    ).body.data.accountId;
    apiMade = (
      await app
        .http()
        .post(`/v1/accounts/${accountId}/keys`)
        .set(...bearer(keys.admin))
        .send({ name: 'made-by-api', scopes: ['ingest'] })
        .expect(201)
    ).body.data.secret;
  });

  it('next start: a reduced scope applies, an unlisted key is revoked, the API-made key still works', async () => {
    const app = await start(`acme:${keys.full}:read`, `acme:${keys.admin}:admin`);
    expect((await append(app, keys.full).expect(403)).body.error.code).toBe('FORBIDDEN');
    await app
      .http()
      .get('/v1/chains')
      .set(...bearer(keys.full))
      .expect(200);
    await append(app, keys.dropped).expect(401);
    await append(app, apiMade).expect(201);
    const rows = await app.dataSource.query<{ name: string; origin: string; scopes: string[]; revoked: boolean }[]>(
      `SELECT name, origin, scopes, revoked_at IS NOT NULL AS revoked FROM api_keys ORDER BY created_at, id`,
    );
    expect(rows).toEqual([
      { name: 'API_KEYS', origin: 'config', scopes: ['read'], revoked: false },
      { name: 'API_KEYS', origin: 'config', scopes: ['ingest', 'read'], revoked: true },
      { name: 'API_KEYS', origin: 'config', scopes: ['admin'], revoked: false },
      { name: 'made-by-api', origin: 'api', scopes: ['ingest'], revoked: false },
    ]);
  });

  it('listed again: a revoked key stays revoked (a restart never brings a revoked key back)', async () => {
    const app = await start(`acme:${keys.full}`, `acme:${keys.dropped}`, `acme:${keys.admin}:admin`);
    await append(app, keys.full).expect(201);
    await append(app, keys.dropped).expect(401);
  });
});

/**
 * Issue 26 item 14: on the embedded default (no DATABASE_URL, no API_KEYS) a newcomer sees every
 * page of the console while the service runs: the development key administers its account, and a
 * development operator key manages accounts. Embedded whatever the suite's database.
 */
// Its starts migrate a fresh embedded database (no template): seconds alone, over a minute beside other suites.
jest.setTimeout(240_000);

describe("the embedded default's development keys", () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'audit-e2e-dev-'));
  let t: TestApp | null = null;
  afterEach(async () => {
    await t?.close();
    t = null;
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const start = async () => (t = await startTestApp({ bootstrapKeys: [] }, { url: null, dataDir }));
  const kept = (name: string) => {
    const file = join(dataDir, name);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    return readFileSync(file, 'utf8').trim();
  };
  const me = async (app: TestApp, key: string) =>
    (
      await app
        .http()
        .get('/v1/me')
        .set(...bearer(key))
        .expect(200)
    ).body.data as { accountId: string; accountName: string; scopes: string[] };

  it('first start: the dev key ingests, reads and administers dev (Keys); the operator key manages accounts', async () => {
    const app = await start();
    const dev = kept('dev-api-key');
    const devMe = await me(app, dev);
    expect(devMe).toMatchObject({ accountName: 'dev', scopes: ['ingest', 'read', 'admin'] });
    await app
      .http()
      .post('/v1/events')
      .set(...bearer(dev))
      .send({ actor: 'a', action: 'b' })
      .expect(201);
    await app
      .http()
      .post(`/v1/accounts/${devMe.accountId}/keys`)
      .set(...bearer(dev))
      .send({ name: 'made-in-console', scopes: ['read'] })
      .expect(201);
    const operator = kept('dev-operator-key');
    expect(await me(app, operator)).toMatchObject({ accountName: 'system', scopes: ['operator'] });
    const accounts = (
      await app
        .http()
        .get('/v1/accounts')
        .set(...bearer(operator))
        .expect(200)
    ).body.data.map((a: { name: string }) => a.name);
    expect(accounts).toEqual(expect.arrayContaining(['dev', 'system']));
    // Named as what it is on the Keys page (issue 40 item 7).
    const names = await app.dataSource.query<{ name: string }[]>(`SELECT name FROM api_keys WHERE key_digest = $1`, [
      digestApiKey(dev),
    ]);
    expect(names).toEqual([{ name: 'development key' }]);
    // As a DATA_DIR made before these changes left it: its dev key ingest+read and named API_KEYS, no operator key.
    await app.dataSource.query(
      `UPDATE api_keys SET scopes = '{ingest,read}', name = 'API_KEYS' WHERE key_digest = $1`,
      [digestApiKey(dev)],
    );
    rmSync(join(dataDir, 'dev-operator-key'));
  });

  it('a DATA_DIR made before: the same dev key gets admin at the next start, and an operator key is made', async () => {
    const app = await start();
    const dev = kept('dev-api-key');
    expect((await me(app, dev)).scopes).toEqual(['ingest', 'read', 'admin']);
    await expect(
      app.dataSource.query(`SELECT name FROM api_keys WHERE key_digest = $1`, [digestApiKey(dev)]),
    ).resolves.toEqual([{ name: 'development key' }]);
    expect((await me(app, kept('dev-operator-key'))).scopes).toEqual(['operator']);
    const operators = await app.dataSource.query<{ revoked: boolean }[]>(
      `SELECT revoked_at IS NOT NULL AS revoked FROM api_keys WHERE 'operator' = ANY(scopes) ORDER BY created_at`,
    );
    expect(operators).toEqual([{ revoked: true }, { revoked: false }]); // the one no longer kept is revoked
  });
});
