import { ADMIN_KEYS, adminBootstrapKeys } from './support/admin-keys';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/**
 * Attacks on action schemas (threat model P6, P8, P11) from the attack run of 2026-12-07
 * (findings 1, 2, 3, 4, 10): each test failed before its fix.
 */
describe('Action schemas under attack', () => {
  let t: TestApp;
  let acme: string;

  beforeAll(async () => {
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys() });
    acme = (
      await t
        .http()
        .get('/v1/me')
        .set(...bearer(KEYS.acme))
        .expect(200)
    ).body.data.accountId;
  });
  afterAll(async () => {
    await t.close();
  });

  const url = (action: string) => `/v1/accounts/${acme}/schemas/${action}`;

  it('P6: an :action with %00 is a 400 naming action on PUT, GET, DELETE and preview (500 today)', async () => {
    const admin = bearer(ADMIN_KEYS.acmeAdmin);
    const answers = [
      await t
        .http()
        .put(url('a%00b'))
        .set(...admin)
        .send({ schema: {}, mode: 'warn' }),
      await t
        .http()
        .get(url('a%00b'))
        .set(...admin),
      await t
        .http()
        .delete(url('a%00b'))
        .set(...admin),
      await t
        .http()
        .post(url('a%00b/preview'))
        .set(...admin)
        .send({ schema: {} }),
      await t
        .http()
        .get(url('a%00b/versions/1'))
        .set(...admin),
    ];
    for (const res of answers) {
      expect(res.status).toBe(400);
      expect(res.body.error.details.fields[0].field).toBe('action');
    }
  });

  it('P6: a :n with %00 or bad encoding is a 400 naming n', async () => {
    const admin = bearer(ADMIN_KEYS.acmeAdmin);
    for (const n of ['1%00', '1%ED%A0%80', '%zz']) {
      const res = await t
        .http()
        .get(url(`some.action/versions/${n}`))
        .set(...admin);
      expect(res.status).toBe(400);
      expect(res.body.error.details.fields[0].field).toBe('n');
    }
  });

  it('P6: an :action that is not percent-encoded UTF-8 is a 400 naming action, never saved under another name (201 "undecodable-<uuid>" today)', async () => {
    const res = await t
      .http()
      .put(url('a%ED%A0%80'))
      .set(...bearer(ADMIN_KEYS.acmeAdmin))
      .send({ schema: {}, mode: 'warn' });
    expect(res.status).toBe(400);
    expect(res.body.error.details.fields[0].field).toBe('action');
    const [{ n }] = await t.dataSource.query(
      `SELECT count(*)::int AS n FROM action_schemas WHERE action LIKE 'undecodable-%'`,
    );
    expect(n).toBe(0);
  });
});
