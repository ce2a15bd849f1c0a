import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

interface Operation {
  security?: Record<string, string[]>[];
  responses: Record<string, unknown>;
  requestBody?: { content: Record<string, { schema: { $ref: string } }> };
}
interface Schema {
  properties: Record<string, unknown>;
  required?: string[];
}
interface Document {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

/** The OpenAPI description is generated from the code; these tests hold it to what the service does. */
describe('OpenAPI description', () => {
  let t: TestApp;
  let doc: Document;
  const auth = () => bearer(KEYS.acme);

  beforeAll(async () => {
    t = await startTestApp();
    doc = (await t.http().get('/openapi.json').expect(200)).body as Document;
  });
  afterAll(async () => {
    await t.close();
  });

  const operations = () =>
    Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ method, path, op })),
    );
  const schema = (name: string): Schema => doc.components.schemas[name]!;
  const sorted = (keys: Iterable<string>) => [...keys].sort();

  it('is public, OpenAPI 3, and describes every route the service has', () => {
    expect(doc.openapi).toMatch(/^3\./);
    expect(
      operations()
        .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
        .sort(),
    ).toEqual(
      [
        'GET /health/live',
        'GET /health/ready',
        'POST /v1/events',
        'GET /v1/events',
        'GET /v1/events/{id}',
        'GET /v1/events/export',
        'GET /v1/events/{id}/verify',
        'GET /v1/chains',
        'GET /v1/chain/{chainId}/status',
        'GET /v1/chain/{chainId}/checkpoint',
        'GET /v1/chain/{chainId}/verify',
        'GET /v1/checkpoint-key',
      ].sort(),
    );
  });

  it('says which routes need a key exactly as the service enforces it', async () => {
    for (const { method, path, op } of operations()) {
      const url = path
        .replace('{id}', 'evt_01KAR2Y6T0F5M3Q8W9Z1B4C7D2')
        .replace('{chainId}', 'chn_01KAR2Y6T0F5M3Q8W9Z1B4C7D2');
      const res = await (method === 'post' ? t.http().post(url).send({}) : t.http().get(url));
      const secured = (op.security ?? []).some((requirement) => 'bearer' in requirement);
      expect({ route: `${method} ${path}`, unauthorized: res.status === 401 }).toEqual({
        route: `${method} ${path}`,
        unauthorized: secured,
      });
      if (secured) expect(op.responses['401']).toBeDefined();
    }
  });

  it('describes the request body and the response shapes the service really sends', async () => {
    const body = doc.paths['/v1/events']!.post!.requestBody!.content['application/json']!.schema.$ref;
    expect(body).toBe('#/components/schemas/CreateEventDto');
    expect(sorted(schema('CreateEventDto').required ?? [])).toEqual(['action', 'actor']);
    expect(sorted(Object.keys(schema('CreateEventDto').properties))).toEqual([
      'action',
      'actor',
      'chain',
      'context',
      'resource',
    ]);

    const event = (
      await t
        .http()
        .post('/v1/events')
        .set(...auth())
        .send({ actor: 'a', action: 'openapi.check', chain: 'openapi', context: { x: 1 } })
        .expect(201)
    ).body.data;
    const chainId = event.chain.id as string;
    const wire: Record<string, unknown> = {
      EventView: event,
      EventChainRef: event.chain,
      ChainView: (
        await t
          .http()
          .get(`/v1/chain/${chainId}/status`)
          .set(...auth())
          .expect(200)
      ).body.data,
      VerificationResultView: (
        await t
          .http()
          .get(`/v1/events/${event.id}/verify`)
          .set(...auth())
          .expect(200)
      ).body.data,
      ChainVerificationView: (
        await t
          .http()
          .get(`/v1/chain/${chainId}/verify`)
          .set(...auth())
          .expect(200)
      ).body.data,
      ErrorEnvelope: (await t.http().get(`/v1/chain/${chainId}/verify`).expect(401)).body,
    };
    for (const [name, sample] of Object.entries(wire)) {
      expect({ name, keys: sorted(Object.keys(schema(name).properties)) }).toEqual({
        name,
        keys: sorted(Object.keys(sample as object)),
      });
    }
    const error = (
      await t
        .http()
        .get('/v1/events?limit=0')
        .set(...auth())
        .expect(400)
    ).body.error;
    expect(sorted(Object.keys(schema('ErrorBody').properties))).toEqual(sorted(Object.keys(error)));
  });

  it('documents the limits the validation enforces', () => {
    const list = doc.paths['/v1/events']!.get as unknown as {
      parameters: { name: string; schema: { minimum?: number; maximum?: number } }[];
    };
    expect(list.parameters.find((p) => p.name === 'limit')!.schema).toMatchObject({ minimum: 1, maximum: 200 });
    expect(schema('CreateEventDto').properties.actor).toMatchObject({ maxLength: 256 });
  });

  it('serves a browsable UI from local files that calls no outside host', async () => {
    const page = await t.http().get('/docs/').expect(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    const init = await t.http().get('/docs/swagger-ui-init.js').expect(200);
    expect(init.text).toContain('"validatorUrl": null');
    // Only the SVG/XLink namespace names, which no browser fetches.
    expect(`${page.text}${init.text}`).not.toMatch(/https?:\/\/(?!www\.w3\.org\/)[a-z]/i);
  });
});
