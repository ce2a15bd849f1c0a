import { run } from '../apps/cli/src/cli';
import { bearer, startTestApp, TestApp, usingPostgres } from './support/test-app';

/*
 * `keys create|list|revoke` talk to DATABASE_URL with their own connection. The embedded database
 * accepts exactly one connection (the app's pool), so these run on PostgreSQL only.
 */
const describeOnPostgres = usingPostgres() ? describe : describe.skip;

describeOnPostgres('cli keys (PostgreSQL)', () => {
  let t: TestApp;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    t = await startTestApp();
    env = { DATABASE_URL: t.config.databaseUrl! };
  });
  afterAll(async () => {
    await t.close();
  });

  async function cli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = '';
    let err = '';
    const code = await run(args, { out: (s) => (out += s), err: (s) => (err += s), env });
    return { code, out, err };
  }

  const newKey = (out: string): string => /^(ats_[A-Za-z0-9_-]{43})$/m.exec(out)![1]!;

  it('creates a key that works once, stored only as its digest, with the asked scopes', async () => {
    const created = await cli('keys', 'create', '--account', 'newco', '--scopes', 'read');
    expect(created.code).toBe(0);
    const key = newKey(created.out);
    expect(created.out).toMatch(/only time the key is shown/);
    await t
      .http()
      .get('/v1/chains')
      .set(...bearer(key))
      .expect(200);
    expect(
      (
        await t
          .http()
          .post('/v1/events')
          .set(...bearer(key))
          .send({ actor: 'a', action: 'b' })
          .expect(403)
      ).body.error.code,
    ).toBe('FORBIDDEN');
    const rows = await t.dataSource.query<{ prefix: string; key_digest: string; scopes: string[] }[]>(
      `SELECT prefix, key_digest, scopes FROM api_keys k JOIN accounts a ON a.id = k.account_id WHERE a.name = 'newco'`,
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]!.prefix).toBe(key.slice(0, 8));
    expect(rows[0]!.scopes).toEqual(['read']);
    expect(JSON.stringify(rows)).not.toContain(key);
  });

  it('lists the keys of an account without the keys themselves', async () => {
    const key = newKey((await cli('keys', 'create', '--account', 'listco')).out);
    const listed = await cli('keys', 'list', '--account', 'listco');
    expect(listed.code).toBe(0);
    expect(listed.out).toMatch(
      new RegExp(
        `^key_\\w{26}  ${key.slice(0, 8)}…  ingest\\+read  created \\S+  active  \\(account 'listco'\\)$`,
        'm',
      ),
    );
    expect(listed.out).not.toContain(key);
    expect((await cli('keys', 'list', '--account', 'nobody')).out).toMatch(/No keys/);
  });

  it('revokes by prefix or id; a revoked key is refused', async () => {
    const byPrefix = newKey((await cli('keys', 'create', '--account', 'revokeco')).out);
    expect((await cli('keys', 'revoke', byPrefix.slice(0, 8), '--account', 'revokeco')).code).toBe(0);
    expect(
      (
        await t
          .http()
          .get('/v1/chains')
          .set(...bearer(byPrefix))
          .expect(401)
      ).body.error.code,
    ).toBe('UNAUTHORIZED');
    const created = await cli('keys', 'create', '--account', 'revokeco');
    const id = /Created key (key_\w{26})/.exec(created.out)![1]!;
    expect((await cli('keys', 'revoke', id)).code).toBe(0);
    await t
      .http()
      .get('/v1/chains')
      .set(...bearer(newKey(created.out)))
      .expect(401);
    expect((await cli('keys', 'list', '--account', 'revokeco')).out.match(/revoked \S+/g)).toHaveLength(2);
    expect((await cli('keys', 'revoke', id)).code).toBe(1);
  });

  it('refuses bad usage with exit 2', async () => {
    expect((await cli('keys', 'create', '--account', 'bad name')).code).toBe(2);
    expect((await cli('keys', 'create', '--account', 'x', '--scopes', 'bogus')).code).toBe(2);
    expect((await cli('keys', 'create', '--account', 'x', '--scopes', 'operator')).code).toBe(2);
    expect((await cli('keys', 'rotate', '--account', 'x')).code).toBe(2);
  });
});
