import { ROUTE_SCOPES, scopesAllow } from '@app/auth';
import type { Scope } from '@app/common';
import { openApiDocument } from '../apps/api/src/openapi/openapi';
import { adminBootstrapKeys, ADMIN_KEYS } from './support/admin-keys';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/** One key per scope, each alone. */
const KEY_OF: Record<Scope, string> = {
  ingest: KEYS.acmeIngestOnly,
  read: KEYS.acmeReadOnly,
  admin: ADMIN_KEYS.acmeAdmin,
  operator: ADMIN_KEYS.operator,
};

/**
 * Every scope × every route, generated from ROUTE_SCOPES (libs/auth), the one place that decides:
 * 403 FORBIDDEN exactly where the table says the scope is not enough, and never elsewhere. Path
 * parameters are well-formed ids (the caller's own account for :accountId), so an allowed call
 * answers 200, 201, 400 (an empty body) or 404, but never 401 or 403.
 */
describe('scopes × routes', () => {
  let t: TestApp;
  const accountOf: Partial<Record<Scope, string>> = {};
  beforeAll(async () => {
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys() });
    for (const [scope, key] of Object.entries(KEY_OF) as [Scope, string][]) {
      accountOf[scope] = (
        await t
          .http()
          .get('/v1/me')
          .set(...bearer(key))
          .expect(200)
      ).body.data.accountId;
    }
  });
  afterAll(async () => {
    await t.close();
  });

  it('ROUTE_SCOPES lists exactly the routes of the OpenAPI description that need a key', () => {
    const document = openApiDocument(t.app);
    const described = Object.entries(document.paths).flatMap(([path, item]) =>
      (['get', 'post', 'put', 'patch', 'delete'] as const)
        .filter((method) => item[method] && (item[method].security ?? []).length > 0)
        .map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
    );
    expect(described.sort()).toEqual(Object.keys(ROUTE_SCOPES).sort());
  });

  const cases = Object.entries(ROUTE_SCOPES).flatMap(([route, needed]) =>
    (Object.keys(KEY_OF) as Scope[]).map((scope) => [route, scope, scopesAllow(needed, [scope])] as const),
  );

  it.each(cases)('%s with a %s key: allowed %s', async (route, scope, allowed) => {
    const [method, template] = route.split(' ') as [string, string];
    const path = template
      .replace(':accountId', accountOf[scope]!)
      .replace(':id', 'evt_01KAR2Y6T0F5M3Q8W9Z1B4C7D2')
      .replace(':chainId', 'chn_01KAR2Y6T0F5M3Q8W9Z1B4C7D2')
      .replace(':keyId', 'key_01KAR2Y6T0F5M3Q8W9Z1B4C7D2')
      .replace(':destinationId', 'dst_01KAR2Y6T0F5M3Q8W9Z1B4C7D2');
    const agent = t.http();
    const call =
      method === 'GET'
        ? agent.get(path)
        : method === 'DELETE'
          ? agent.delete(path)
          : method === 'PUT'
            ? agent.put(path).send({})
            : method === 'PATCH'
              ? agent.patch(path).send({})
              : agent.post(path).send({});
    // The live tail never ends: a malformed Last-Event-ID makes an allowed key's answer a quick 400.
    if (route === 'GET /v1/events/stream') call.set('Last-Event-ID', 'not-an-id');
    const res = await call.set(...bearer(KEY_OF[scope]));
    if (allowed) {
      expect([200, 201, 400, 404]).toContain(res.status);
    } else {
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('FORBIDDEN');
    }
  });
});
