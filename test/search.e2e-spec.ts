import { bearer, exportJsonText, KEYS, startTestApp, TestApp } from './support/test-app';

/** GET /v1/events?q= (docs/contract.md §13): every term kind, each compared with the same filter done in JavaScript. */
type EventView = {
  id: string;
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
  timestamp: string;
  chain: { id: string; name: string; position: number };
};

const ACTORS = ['alice', 'alina', 'bob', 'system:cron', 'Al "the" \\ one'];
const ACTIONS = ['order.created', 'order.paid', 'orders.export', 'user.login'];
const CONTEXTS: (Record<string, unknown> | null)[] = [
  null,
  { order: { id: 4711, note: 'rush' } },
  { order: { id: '4711' } },
  { order: { id: 4712 }, flag: true },
  { flag: false, tags: ['a', 4711] },
  { flag: null, 'odd key': 1 },
  { order: null },
  { amount: 12.5, order: { id: 4711, lines: [{ sku: 'x' }] } },
];

/** A JS reading of a context path: undefined when absent. */
function at(context: Record<string, unknown> | null, path: string[]): unknown {
  let value: unknown = context;
  for (const key of path) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || !(key in value)) return undefined;
    value = (value as Record<string, unknown>)[key];
  }
  return value;
}

describe('GET /v1/events?q=', () => {
  let t: TestApp;
  let all: EventView[];
  let middle: string;

  const list = async (q: string, extra: Record<string, string> = {}): Promise<string[]> => {
    const ids: string[] = [];
    let cursor: string | undefined;
    do {
      const res = await t
        .http()
        .get('/v1/events')
        .query({ q, limit: '7', ...extra, ...(cursor ? { cursor } : {}) })
        .set(...bearer(KEYS.acme))
        .expect(200);
      ids.push(...(res.body.data as EventView[]).map((e) => e.id));
      cursor = res.body.nextCursor;
    } while (cursor);
    return ids.sort();
  };
  const expected = (keep: (e: EventView) => boolean): string[] =>
    all
      .filter(keep)
      .map((e) => e.id)
      .sort();

  beforeAll(async () => {
    t = await startTestApp();
    for (let i = 0; i < 40; i++) {
      await t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send({
          actor: ACTORS[i % ACTORS.length],
          action: ACTIONS[i % ACTIONS.length],
          resource: i % 3 === 0 ? null : `order/${i % 4}`,
          context: CONTEXTS[i % CONTEXTS.length],
          chain: i % 2 === 0 ? 'main' : 'side',
        })
        .expect(201);
      if (i === 20) middle = new Date().toISOString();
    }
    // Another account's events match the same terms and must never show.
    await t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.globex))
      .send({ actor: 'alice', action: 'order.created', context: { order: { id: 4711 } }, chain: 'main' })
      .expect(201);
    all = [];
    let cursor: string | undefined;
    do {
      const res = await t
        .http()
        .get('/v1/events')
        .query({ limit: '200', ...(cursor ? { cursor } : {}) })
        .set(...bearer(KEYS.acme))
        .expect(200);
      all.push(...res.body.data);
      cursor = res.body.nextCursor;
    } while (cursor);
    expect(all).toHaveLength(40);
  });
  afterAll(async () => {
    await t.close();
  });

  const cases: [string, (e: EventView) => boolean][] = [
    ['actor:alice', (e) => e.actor === 'alice'],
    ['actor:al*', (e) => e.actor.startsWith('al')],
    ['-actor:al*', (e) => !e.actor.startsWith('al')],
    ['actor:"system:cron"', (e) => e.actor === 'system:cron'],
    ['actor:"Al \\"the\\" \\\\ one"', (e) => e.actor === 'Al "the" \\ one'],
    ['action:order.*', (e) => e.action.startsWith('order.')],
    ['action:order*', (e) => e.action.startsWith('order')],
    ['-action:user.login', (e) => e.action !== 'user.login'],
    ['resource:order/1', (e) => e.resource === 'order/1'],
    ['resource:order*', (e) => e.resource !== null && e.resource.startsWith('order')],
    ['-resource:order/1', (e) => e.resource !== 'order/1'],
    ['-resource:order*', (e) => !(e.resource ?? '').startsWith('order') || e.resource === null],
    ['chain:main', (e) => e.chain.name === 'main'],
    ['-chain:main', (e) => e.chain.name !== 'main'],
    ['context.order.id:4711', (e) => at(e.context, ['order', 'id']) === 4711],
    ['context.order.id:"4711"', (e) => at(e.context, ['order', 'id']) === '4711'],
    ['-context.order.id:4711', (e) => at(e.context, ['order', 'id']) !== 4711],
    ['context.flag:true', (e) => at(e.context, ['flag']) === true],
    ['context.flag:false', (e) => at(e.context, ['flag']) === false],
    ['context.flag:null', (e) => at(e.context, ['flag']) === null],
    ['-context.flag:null', (e) => at(e.context, ['flag']) !== null],
    ['context.order:null', (e) => at(e.context, ['order']) === null],
    ['context.amount:12.5', (e) => at(e.context, ['amount']) === 12.5],
    ['context.tags:4711', () => false], // an array holding the value is not the value
    ['context.order.note:rush', (e) => at(e.context, ['order', 'note']) === 'rush'],
    [
      'action:order.* context.order.id:4711 -actor:bob',
      (e) => e.action.startsWith('order.') && at(e.context, ['order', 'id']) === 4711 && e.actor !== 'bob',
    ],
  ];

  it.each(cases)('%s matches what JavaScript finds', async (q, keep) => {
    expect(await list(q)).toEqual(expected(keep));
  });

  it('compares timestamps, negated too, and combines with the other filters', async () => {
    expect(await list(`timestamp:>${middle}`)).toEqual(expected((e) => e.timestamp > middle));
    expect(await list(`timestamp:<=${middle}`)).toEqual(expected((e) => e.timestamp <= middle));
    expect(await list(`-timestamp:<=${middle}`)).toEqual(expected((e) => !(e.timestamp <= middle)));
    expect(await list(`timestamp:>="${middle}"`)).toEqual(expected((e) => e.timestamp >= middle));
    const chainId = all.find((e) => e.chain.name === 'side')!.chain.id;
    expect(await list('actor:al*', { chain_id: chainId, after: '2000-01-01T00:00:00Z' })).toEqual(
      expected((e) => e.actor.startsWith('al') && e.chain.id === chainId),
    );
    expect(await list(`chain_id:${chainId}`)).toEqual(expected((e) => e.chain.id === chainId));
  });

  it('filters the export with the same q, and names it in the export header', async () => {
    const res = await t
      .http()
      .get('/v1/events/export')
      .query({
        format: 'json',
        after: '2000-01-01T00:00:00Z',
        before: new Date(Date.now() + 60_000).toISOString(),
        q: 'context.order.id:4711',
      })
      .set(...bearer(KEYS.acme))
      .expect(200);
    const document = JSON.parse(res.text) as { export: { filters: { q: string } }; data: EventView[] };
    expect(document.export.filters.q).toBe('context.order.id:4711');
    expect(document.data.map((e) => e.id).sort()).toEqual(expected((e) => at(e.context, ['order', 'id']) === 4711));
    // Everything but the `_audit` chain, where each export is recorded (docs/contract.md §12).
    const exported = JSON.parse(await exportJsonText(t, KEYS.acme)).data as EventView[];
    expect(exported.filter((e) => e.chain.name !== '_audit')).toHaveLength(40);
  });

  it.each([
    ['actor:', "q needs a value after 'actor:'", 6],
    ['nope:x', 'q unknown field "nope"', 0],
    ['actor:a  chain:b*', 'q chain takes no prefix (*)', 16],
    ['timestamp:>soon', 'q expected an ISO 8601', 11],
  ])('refuses q=%j with 400 naming q and the offset', async (q, message, offset) => {
    for (const path of ['/v1/events', '/v1/events/export']) {
      const res = await t
        .http()
        .get(path)
        .query({ q, format: 'json', after: '2000-01-01T00:00:00Z', before: '2100-01-01T00:00:00Z' })
        .set(...bearer(KEYS.acme))
        .expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      const field = (res.body.error.details.fields as { field: string; message: string }[]).find(
        (f) => f.field === 'q',
      );
      expect(field?.message).toContain(message);
      expect(field?.message).toContain(`(at offset ${offset})`);
    }
  });

  it.each([
    ['context.n:1e999999', 'q the number overflows', 10],
    ['actor:a context.n:1e-16384', 'q the number underflows', 18],
  ])(
    'refuses q=%j, a number PostgreSQL cannot hold, with 400 on the list, export, statistics and stream',
    async (q, message, offset) => {
      const routes: [string, Record<string, string>][] = [
        ['/v1/events', {}],
        ['/v1/events/export', { format: 'json', after: '2000-01-01T00:00:00Z', before: '2100-01-01T00:00:00Z' }],
        ['/v1/stats/events', { group_by: 'resource', after: '2026-01-01T00:00:00Z', before: '2026-12-31T00:00:00Z' }],
        ['/v1/events/stream', {}],
      ];
      for (const [path, extra] of routes) {
        const res = await t
          .http()
          .get(path)
          .query({ q, ...extra })
          .set(...bearer(KEYS.acme))
          .expect(400);
        expect(res.body.error.code).toBe('VALIDATION_ERROR');
        expect(res.body.error.details.fields).toEqual([{ field: 'q', message: expect.stringContaining(message) }]);
        expect(res.body.error.details.fields[0].message).toContain(`(at offset ${offset})`);
      }
    },
  );

  it('refuses a q over 2,000 characters and a NUL in a value', async () => {
    for (const q of [`actor:${'a'.repeat(2000)}`, 'actor:"a\u0000b"']) {
      const res = await t
        .http()
        .get('/v1/events')
        .query({ q })
        .set(...bearer(KEYS.acme))
        .expect(400);
      expect(res.body.error.details.fields[0].field).toBe('q');
    }
  });
});
