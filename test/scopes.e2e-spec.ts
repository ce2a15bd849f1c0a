import { ModulesContainer } from '@nestjs/core';
import { routeScopesOf, scopesAllow } from '@app/auth';
import type { Scope } from '@app/common';
import { AppModule } from '../apps/api/src/app.module';
import { openApiDocument } from '../apps/api/src/openapi/openapi';
import { adminBootstrapKeys, ADMIN_KEYS } from './support/admin-keys';
import { controllersOf } from './support/controllers';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/** One key per scope, each alone. */
const KEY_OF: Record<Scope, string> = {
  ingest: KEYS.acmeIngestOnly,
  read: KEYS.acmeReadOnly,
  admin: ADMIN_KEYS.acmeAdmin,
  operator: ADMIN_KEYS.operator,
};

/** Every route of the app's controllers that needs a key, with what its handler declares (@RequireScopes, @AnyKey). */
const CONTROLLERS = controllersOf(AppModule);
const ROUTES = routeScopesOf(CONTROLLERS);

/**
 * Every scope × every route, generated from what each handler declares (read as ApiKeyGuard reads
 * it): 403 FORBIDDEN exactly where the declaration says the scope is not enough, and never elsewhere. Path
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

  it("reads the running app's controllers, every one", () => {
    const running = [...t.app.get(ModulesContainer).values()].flatMap((module) =>
      [...module.controllers.values()].map(({ metatype }) => metatype),
    );
    expect(new Set(running)).toEqual(CONTROLLERS);
  });

  it('every route of the OpenAPI description that needs a key declares its scopes, and no other route needs one', () => {
    const undeclared = [...ROUTES].filter(([, needed]) => needed === undefined).map(([route]) => route);
    expect(undeclared).toEqual([]);
    const document = openApiDocument(t.app);
    const described = Object.entries(document.paths).flatMap(([path, item]) =>
      (['get', 'post', 'put', 'patch', 'delete'] as const)
        .filter((method) => item[method] && (item[method].security ?? []).length > 0)
        .map((method) => `${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`),
    );
    expect(described.sort()).toEqual([...ROUTES.keys()].sort());
  });

  const cases = [...ROUTES].flatMap(([route, needed]) =>
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
