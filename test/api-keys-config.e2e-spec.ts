import { rmSync } from 'node:fs';
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
    const rows = (await app.dataSource.query(
      `SELECT name, origin, scopes, revoked_at IS NOT NULL AS revoked FROM api_keys ORDER BY created_at, id`,
    )) as { name: string; origin: string; scopes: string[]; revoked: boolean }[];
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
