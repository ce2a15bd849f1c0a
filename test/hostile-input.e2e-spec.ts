import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { OpenAPIObject } from '@nestjs/swagger';
import type {
  OperationObject,
  ParameterObject,
  ReferenceObject,
  RequestBodyObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { openApiDocument } from '../apps/api/src/openapi/openapi';
import { ADMIN_KEYS, adminBootstrapKeys } from './support/admin-keys';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

const NUL = 'must not contain the NUL character (\\u0000)';
const LONE = 'must not contain lone UTF-16 surrogates';
type Field = { field: string; message: string };

/**
 * Issue 37 items 6, 10, 11, 12 and threat-model attack 3 ("as a hostile client"): one check for
 * every string of every body, query and path (docs/contract.md §8), null only where the
 * description says nullable, the HTTP parser's refusals in the envelope (§5), and a description
 * no looser than the validation. The last part generates its cases from /openapi.json, so a new
 * route or member is attacked without anyone writing its case.
 */
describe('hostile input (issue 37 items 6, 10, 11, 12)', () => {
  let t: TestApp;
  let acmeId = '';
  let chainId = '';
  let eventId = '';
  let keyId = '';
  let destinationId = '';

  beforeAll(async () => {
    t = await startTestApp({ bootstrapKeys: adminBootstrapKeys(), streamDelivery: false });
    acmeId = (await send('get', '/v1/me', KEYS.acme).expect(200)).body.data.accountId;
    const event = (await send('post', '/v1/events', KEYS.acme, { actor: 'a', action: 'b' }).expect(201)).body.data;
    [eventId, chainId] = [event.id, event.chain.id];
    keyId = (await send('get', `/v1/accounts/${acmeId}/keys`, ADMIN_KEYS.acmeAdmin).expect(200)).body.data[0].id;
    destinationId = (await send('post', destinations(), ADMIN_KEYS.acmeAdmin, WEBHOOK).expect(201)).body.data.id;
  });
  afterAll(async () => {
    await t?.close();
  });

  const WEBHOOK = { name: 'hook', kind: 'webhook', url: 'https://siem.example.com/hook' };
  const destinations = () => `/v1/accounts/${acmeId}/destinations`;
  function send(method: 'get' | 'post' | 'put' | 'patch' | 'delete', path: string, key: string, body?: unknown) {
    const req = t
      .http()
      [method](path)
      .set(...bearer(key));
    return body === undefined ? req : req.send(body as object);
  }
  const fieldsOf = (res: { status: number; body: { error?: { details?: { fields?: Field[] } } } }): Field[] => {
    expect(res.status).toBe(400);
    return res.body.error?.details?.fields ?? [];
  };
  const count = async (table: string) =>
    (await t.dataSource.query<[{ n: number }]>(`SELECT count(*)::int AS n FROM ${table}`))[0].n;

  describe('one check for every string of every body (item 6)', () => {
    const cases: [string, 'post' | 'put' | 'patch', () => string, string, object, Field][] = [
      ['an event member', 'post', () => '/v1/events', KEYS.acme, { actor: 'a\u0000', action: 'b' }, f('actor', NUL)],
      [
        'a nested context member name',
        'post',
        () => '/v1/events',
        KEYS.acme,
        { actor: 'a', action: 'b', context: { a: { 'b\ud800': 1 } } },
        { field: 'context.a.b\ud800', message: `member names ${LONE}` },
      ],
      [
        'a batch item’s context',
        'post',
        () => '/v1/events/batch',
        KEYS.acme,
        {
          events: [
            { actor: 'a', action: 'b' },
            { actor: 'a', action: 'b', context: { a: 'x\udc00' } },
          ],
        },
        f('events[1].context.a', LONE),
      ],
      [
        'a key’s name',
        'post',
        () => `/v1/accounts/${acmeId}/keys`,
        ADMIN_KEYS.acmeAdmin,
        { name: 'k\u0000', scopes: ['read'] },
        f('name', NUL),
      ],
      ['an account’s name', 'post', () => '/v1/accounts', ADMIN_KEYS.operator, { name: 'x\ud800' }, f('name', LONE)],
      [
        'a destination’s url',
        'post',
        destinations,
        ADMIN_KEYS.acmeAdmin,
        { ...WEBHOOK, url: 'https://siem.example.com/\ud800' },
        f('url', LONE),
      ],
      [
        'a destination’s header value',
        'post',
        destinations,
        ADMIN_KEYS.acmeAdmin,
        { ...WEBHOOK, headers: { 'X-A': 'v\u0000' } },
        f('headers.X-A', NUL),
      ],
      [
        'a destination’s new name',
        'patch',
        () => `${destinations()}/${destinationId}`,
        ADMIN_KEYS.acmeAdmin,
        { name: 'n\ud800' },
        f('name', LONE),
      ],
      ...(
        [
          [{ fields: ['context.\ud800'], reason: 'r' }, f('fields[0]', LONE)],
          [{ fields: ['actor'], reason: 'r\ud800' }, f('reason', LONE)],
          [{ fields: ['context.a\u0000'], reason: 'r' }, f('fields[0]', NUL)],
          [{ fields: ['actor'], reason: 'r\u0000' }, f('reason', NUL)],
        ] as const
      ).map(
        ([body, field]) =>
          [
            `an erasure’s ${field.field}`,
            'post',
            () => '/v1/erasures',
            ADMIN_KEYS.acmeAdmin,
            { q: 'actor:nobody', ...body },
            field,
          ] as (typeof cases)[number],
      ),
      [
        'a legal hold’s reason',
        'put',
        () => `/v1/accounts/${acmeId}/legal-hold`,
        ADMIN_KEYS.acmeAdmin,
        { hold: true, reason: 'why\u0000' },
        f('reason', NUL),
      ],
      [
        'a chain’s legal hold reason',
        'put',
        () => `/v1/chain/${chainId}/legal-hold`,
        ADMIN_KEYS.acmeAdmin,
        { hold: true, reason: '\udbff' },
        f('reason', LONE),
      ],
    ];

    it.each(cases)('%s: 400 naming the member, nothing stored', async (_name, method, path, key, body, field) => {
      const tables = ['events', 'api_keys', 'accounts', 'destinations', 'erasures'];
      const before = await Promise.all(tables.map(count));
      expect(fieldsOf(await send(method, path(), key, body))).toEqual([field]);
      expect(await Promise.all(tables.map(count))).toEqual(before);
    });

    it('a destination url with a lone surrogate is refused, never stored with U+FFFD', async () => {
      const sent = { ...WEBHOOK, url: 'https://siem.example.com/a\ud800b' };
      fieldsOf(await send('post', destinations(), ADMIN_KEYS.acmeAdmin, sent));
      const urls = (await send('get', destinations(), ADMIN_KEYS.acmeAdmin).expect(200)).body.data.map(
        (d: { url: string }) => d.url,
      );
      expect(urls.filter((url: string) => url.includes('\ufffd'))).toEqual([]);
    });

    it('names every member at fault in one answer; well-formed pairs are text like any other', async () => {
      const res = await send('post', '/v1/events', KEYS.acme, {
        actor: '\u0000',
        action: '\ud800',
        context: { '😀': 1 },
      });
      expect(fieldsOf(res)).toEqual([f('actor', NUL), f('action', LONE)]);
      await send('post', '/v1/events', KEYS.acme, {
        actor: '\ud83d\ude00',
        action: 'b',
        context: { '😀': '😀' },
      }).expect(201);
    });
  });

  describe('one check for every query and path parameter (item 6)', () => {
    it.each([
      ['/v1/events?actor=a%00', f('actor', NUL)],
      ['/v1/events?q=actor:%22a%00b%22', f('q', NUL)],
      ['/v1/events?actor=%FF', { field: 'actor', message: 'actor is not valid percent-encoded UTF-8' }],
      ['/v1/events?actor=%ED%A0%80', { field: 'actor', message: 'actor is not valid percent-encoded UTF-8' }],
      ['/v1/events?%00=1', f('\u0000', NUL)],
      ['/v1/stats/events?by=action&q=context.a:%00', f('q', NUL)],
      ['/v1/chains?cursor=%00', f('cursor', NUL)],
    ])('GET %s: 400 naming the parameter, never a filter silently altered', async (path, field) => {
      expect(fieldsOf(await send('get', path, KEYS.acme))).toEqual([field]);
    });

    it('a path parameter that decodes to U+0000 is a 400 naming it', async () => {
      expect(fieldsOf(await send('get', '/v1/chain/%00/status', KEYS.acme))).toEqual([f('chainId', NUL)]);
      const path = `${destinations()}/%00`;
      expect(fieldsOf(await send('get', path, ADMIN_KEYS.acmeAdmin))).toEqual([f('destinationId', NUL)]);
    });

    it('authentication still comes first (docs/contract.md §8)', async () => {
      await t.http().get('/v1/events?actor=%00').expect(401);
      await t.http().get('/v1/chain/%00/status').expect(401);
    });
  });

  describe('null only where the description says nullable (item 10)', () => {
    it('an operator’s erasure with accountId null is a 400 naming it, not a 500', async () => {
      const body = { q: 'actor:nobody', fields: ['actor'], reason: 'r', accountId: null };
      for (const key of [ADMIN_KEYS.operator, ADMIN_KEYS.acmeAdmin]) {
        expect(fieldsOf(await send('post', '/v1/erasures', key, body))).toEqual([
          f('accountId', 'must not be null', 'accountId'),
        ]);
      }
      const partial = { q: 'actor:nobody', fields: ['actor'], reason: 'r', allowPartial: null };
      expect(fieldsOf(await send('post', '/v1/erasures', ADMIN_KEYS.acmeAdmin, partial))).toEqual([
        f('allowPartial', 'must not be null', 'allowPartial'),
      ]);
    });

    it.each([
      ['/v1/events', KEYS.acme, { actor: 'a', action: null }, 'action'],
      ['/v1/events/batch', KEYS.acme, { events: [{ actor: null, action: 'b' }] }, 'events[0].actor'],
      ['/v1/events/batch', KEYS.acme, { events: null }, 'events'],
      ['/v1/accounts', ADMIN_KEYS.operator, { name: null }, 'name'],
      ['KEYS', ADMIN_KEYS.acmeAdmin, { name: null, scopes: ['read'] }, 'name'],
      ['KEYS', ADMIN_KEYS.acmeAdmin, { name: 'k', scopes: null }, 'scopes'],
      ['DESTINATIONS', ADMIN_KEYS.acmeAdmin, { ...WEBHOOK, format: null }, 'format'],
      ['DESTINATIONS', ADMIN_KEYS.acmeAdmin, { ...WEBHOOK, start: null }, 'start'],
    ])('POST %s with %j: 400 naming the null member', async (path, key, body, field) => {
      const where = path === 'KEYS' ? `/v1/accounts/${acmeId}/keys` : path === 'DESTINATIONS' ? destinations() : path;
      const member = field.replace(/^events\[0\]\./, '');
      expect(fieldsOf(await send('post', where, key, body))).toEqual([f(field, 'must not be null', member)]);
    });

    it('accepts null where the contract does: an event’s resource, context, chain; q, days, a lifted hold’s reason', async () => {
      await send('post', '/v1/events', KEYS.acme, {
        actor: 'a',
        action: 'b',
        resource: null,
        context: null,
        chain: null,
      }).expect(201);
      await send('patch', `${destinations()}/${destinationId}`, ADMIN_KEYS.acmeAdmin, { q: null }).expect(200);
      await send('put', `/v1/chain/${chainId}/retention`, ADMIN_KEYS.acmeAdmin, { days: null }).expect(200);
      await send('put', `/v1/chain/${chainId}/legal-hold`, ADMIN_KEYS.acmeAdmin, { hold: false, reason: null }).expect(
        200,
      );
      const held = { hold: null, reason: 'r' };
      expect(fieldsOf(await send('put', `/v1/chain/${chainId}/legal-hold`, ADMIN_KEYS.acmeAdmin, held))).toEqual([
        f('hold', 'must not be null', 'hold'),
      ]);
    });
  });

  describe('what the HTTP parser refuses is answered in the envelope (item 11)', () => {
    const ENVELOPE_HEADERS = {
      'content-type': 'application/json; charset=utf-8',
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
      connection: 'close',
    };

    it.each([
      ['a 20 KiB header', 20 * 1024],
      ['a 200 KB header', 200_000],
    ])('%s: 431 REQUEST_HEADER_FIELDS_TOO_LARGE with the headers of every answer, not a reset', async (_n, size) => {
      const res = await t
        .http()
        .get('/v1/events')
        .set(...bearer(KEYS.acme))
        .set('X-Padding', 'p'.repeat(size))
        .expect(431);
      expect(res.headers).toMatchObject(ENVELOPE_HEADERS);
      expect(res.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
      expect(res.body).toEqual({
        error: {
          code: 'REQUEST_HEADER_FIELDS_TOO_LARGE',
          message: expect.stringContaining('larger than'),
          details: { limitBytes: expect.any(Number) },
        },
      });
    });

    it('a URL over the limit is the same 431', async () => {
      const res = await t
        .http()
        .get(`/v1/events?q=${'a'.repeat(20 * 1024)}`)
        .set(...bearer(KEYS.acme))
        .expect(431);
      expect(res.body.error.code).toBe('REQUEST_HEADER_FIELDS_TOO_LARGE');
    });

    it('a request line that is not HTTP is a 400 VALIDATION_ERROR in the envelope', async () => {
      const server = t.app.getHttpServer() as Server;
      if (!server.listening) await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      for (const garbage of ['GARBAGE\r\n\r\n', 'GET /v1/events HTTP/1.1\r\nBad Header\r\n\r\n']) {
        const text = await new Promise<string>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1', () => socket.write(garbage));
          let answer = '';
          socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
          socket.on('end', () => resolve(answer));
          socket.on('error', reject);
        });
        const [head = '', body = ''] = text.split('\r\n\r\n');
        expect(head).toMatch(/^HTTP\/1\.1 400 Bad Request\r\n/);
        expect(head).toContain('X-Content-Type-Options: nosniff');
        expect(head).toContain('Connection: close');
        expect(JSON.parse(body)).toEqual({
          error: {
            code: 'VALIDATION_ERROR',
            message: 'The request is not valid HTTP/1.1.',
            details: { fields: [{ field: 'request', message: expect.any(String) }] },
          },
        });
      }
    });
  });

  describe('the description is no looser than the validation (item 12)', () => {
    let doc: OpenAPIObject;
    beforeAll(() => {
      doc = openApiDocument(t.app);
    });
    const schema = (name: string) => doc.components!.schemas![name] as SchemaObject;
    const member = (name: string, property: string) => schema(name).properties![property] as SchemaObject;

    it.each(['token', 'apiKey', 'sourcetype', 'index'])(
      'a destination’s %s: minLength 1 and printable ASCII, as the service refuses "" and spaces',
      async (property) => {
        for (const dto of ['CreateDestinationDto', 'ChangeDestinationDto']) {
          const described = member(dto, property);
          expect(described).toMatchObject({ minLength: 1, pattern: expect.any(String) });
          const pattern = new RegExp(described.pattern!);
          expect(['abc', '~!x'].every((v) => pattern.test(v))).toBe(true);
          expect(['', 'a b', 'é'].some((v) => pattern.test(v))).toBe(false);
        }
        const body = {
          name: 'splunk',
          kind: 'splunk_hec',
          url: 'https://splunk.example.com',
          token: 't',
          [property]: '',
        };
        const fields = fieldsOf(await send('post', destinations(), ADMIN_KEYS.acmeAdmin, body)).map((x) => x.field);
        expect(fields).toContain(property);
      },
    );

    it('names and the url state what validation requires', () => {
      expect(member('CreateDestinationDto', 'url')).toMatchObject({ minLength: 1 });
      for (const [dto, property] of [
        ['CreateDestinationDto', 'name'],
        ['CreateKeyDto', 'name'],
      ] as const) {
        const pattern = new RegExp(member(dto, property).pattern!);
        expect([pattern.test('billing 😀'), pattern.test('a\u001bb'), pattern.test('a\u0085b')]).toEqual([
          true,
          false,
          false,
        ]);
      }
      const headers = member('CreateDestinationDto', 'headers').additionalProperties as SchemaObject;
      expect(new RegExp(headers.pattern!).test('a\nb')).toBe(false);
    });

    it('says a hold takes a reason as a oneOf, not only in words', () => {
      expect(schema('LegalHoldDto').oneOf).toEqual([
        expect.objectContaining({
          properties: { hold: { type: 'boolean', enum: [true] }, reason: { type: 'string' } },
          required: ['hold', 'reason'],
        }),
        expect.objectContaining({ properties: { hold: { type: 'boolean', enum: [false] } }, required: ['hold'] }),
      ]);
    });

    it('lists 408 and 431 on every operation', () => {
      for (const item of Object.values(doc.paths)) {
        for (const operation of Object.values(item) as OperationObject[]) {
          expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['408', '431']));
        }
      }
    });
  });

  /**
   * Threat-model attack 3 on every body member and query parameter of every operation the
   * description has: U+0000 and a lone surrogate in a value and a member name, null, numbers
   * PostgreSQL cannot hold, strings over the body limit, values of every other type. Never a 500;
   * the string and null cases name the member.
   */
  describe('attack 3, generated from /openapi.json', () => {
    type Operation = { method: 'get' | 'post' | 'put' | 'patch' | 'delete'; path: string; op: OperationObject };
    let operations: Operation[] = [];
    let doc: OpenAPIObject;
    const keysInTurn = [KEYS.acme, ADMIN_KEYS.acmeAdmin, ADMIN_KEYS.operator];

    beforeAll(() => {
      doc = openApiDocument(t.app);
      const ids: Record<string, string> = { accountId: acmeId, chainId, id: eventId, keyId, destinationId };
      operations = Object.entries(doc.paths).flatMap(([template, item]) =>
        (['get', 'post', 'put', 'patch', 'delete'] as const)
          .filter((method) => item[method] !== undefined)
          .map((method) => ({
            method,
            path: template.replace(/\{(\w+)\}/g, (_m, name: string) => ids[name] ?? name),
            op: item[method]!,
          })),
      );
    });
    const resolve = (value: SchemaObject | ReferenceObject | undefined): SchemaObject | undefined =>
      value && '$ref' in value ? (doc.components!.schemas![value.$ref.split('/').pop()!] as SchemaObject) : value;
    const bodySchema = (op: OperationObject) =>
      resolve((op.requestBody as RequestBodyObject | undefined)?.content['application/json']?.schema);

    type Answer = { status: number; body: { error?: { details?: { fields?: Field[] } } }; mismatch?: string };
    /**
     * The answer to the first of the keys that is not 401 or 403 (a key with the route's scope). A
     * request still unanswered after 2 s was accepted and is streaming (the live tail): status 0.
     */
    async function answer(o: Operation, path: string, body?: string): Promise<Answer> {
      let last: Answer = { status: 0, body: {} };
      for (const key of keysInTurn) {
        let req = send(o.method, path, key).timeout(2_000);
        if (body !== undefined) req = req.set('Content-Type', 'application/json').send(body);
        try {
          last = await req;
        } catch (error) {
          // An answer the OpenAPI description does not list fails the request (startTestApp): a finding too.
          if ((error as { timeout?: unknown }).timeout === undefined)
            return { status: -1, body: {}, mismatch: String(error) };
          return { status: 0, body: {} };
        }
        if (last.status !== 401 && last.status !== 403) return last;
      }
      return last;
    }

    it('every body member: strings and names are checked, null only where nullable, never a 500', async () => {
      const problems: string[] = [];
      let cases = 0;
      for (const o of operations) {
        const body = bodySchema(o.op);
        for (const [name, described] of Object.entries(body?.properties ?? {})) {
          const nullable = (resolve(described) as SchemaObject).nullable === true;
          const attacks: [string, string, Field | null][] = [
            ['NUL', JSON.stringify({ [name]: 'x\u0000' }), f(name, NUL)],
            ['a lone surrogate', JSON.stringify({ [name]: ['\ud800'] }), f(`${name}[0]`, LONE)],
            [
              'a lone surrogate in a member name',
              JSON.stringify({ [name]: { 'k\udc00': 1 } }),
              { field: `${name}.k\udc00`, message: `member names ${LONE}` },
            ],
            ['null', JSON.stringify({ [name]: null }), nullable ? null : f(name, 'must not be null', name)],
            ...['1e400', '-1e400', '9007199254740993', '1.5', '-1', 'true', '[]', '{}', '"x"'].map(
              (raw): [string, string, null] => [raw, `{${JSON.stringify(name)}:${raw}}`, null],
            ),
            ['70 KB', JSON.stringify({ [name]: 'x'.repeat(70_000) }), null],
          ];
          for (const [what, text, expected] of attacks) {
            cases++;
            const res = await answer(o, o.path, text);
            const where = `${o.method.toUpperCase()} ${o.path} ${name} ${what}: ${res.status}`;
            if (res.status >= 500 || res.mismatch)
              problems.push(`${where} ${res.mismatch ?? JSON.stringify(res.body)}`);
            const fields = res.body.error?.details?.fields ?? [];
            if (expected && !fields.some((x) => x.field === expected.field && x.message === expected.message)) {
              problems.push(`${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(fields)}`);
            }
            if (!expected && what === 'null' && fields.some((x) => x.message.endsWith('must not be null'))) {
              problems.push(`${where}: null refused for a nullable member`);
            }
          }
        }
      }
      expect(problems).toEqual([]);
      expect(cases).toBeGreaterThan(100);
    }, 600_000);

    it('every query parameter: U+0000 and undecodable text named, hostile values never a 500', async () => {
      const problems: string[] = [];
      let cases = 0;
      for (const o of operations) {
        const parameters = (o.op.parameters ?? []) as ParameterObject[];
        for (const { name } of parameters.filter((p) => p.in === 'query')) {
          const attacks: [string, Field | null][] = [
            ['%00', f(name, NUL)],
            ['a%FFb', { field: name, message: `${name} is not valid percent-encoded UTF-8` }],
            ...['1e400', '-1', '99999999999999999999', '%ef%bf%bf', 'x'.repeat(8000), '%22', '*', ''].map(
              (v): [string, null] => [v, null],
            ),
          ];
          for (const [value, expected] of attacks) {
            cases++;
            const res = await answer(o, `${o.path}?${encodeURIComponent(name)}=${value}`);
            const where = `${o.method.toUpperCase()} ${o.path}?${name}=${value.slice(0, 20)}: ${res.status}`;
            if (res.status >= 500 || res.mismatch)
              problems.push(`${where} ${res.mismatch ?? JSON.stringify(res.body)}`);
            const fields = res.body.error?.details?.fields ?? [];
            if (expected && !fields.some((x) => x.field === expected.field && x.message === expected.message)) {
              problems.push(`${where}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(fields)}`);
            }
          }
        }
      }
      expect(problems).toEqual([]);
      expect(cases).toBeGreaterThan(50);
    }, 600_000);
  });
});

/** The field error for `field`: `<member> <message>`, the member named as the last step of its path unless given. */
function f(field: string, message: string, member = field): Field {
  return { field, message: `${member} ${message}` };
}
