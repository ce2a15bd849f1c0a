import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

type EventView = {
  id: string;
  actor: string;
  action: string;
  resource: string | null;
  timestamp: string;
  createdAt: string;
  chain: { id: string; name: string; position: number };
};

describe('GET /v1/events', () => {
  let t: TestApp;
  let seeded: EventView[];
  const get = (query: string, key: string = KEYS.acme) =>
    t
      .http()
      .get(`/v1/events${query}`)
      .set(...bearer(key));
  const post = (body: object, key: string = KEYS.acme) =>
    t
      .http()
      .post('/v1/events')
      .set(...bearer(key))
      .send(body)
      .expect(201);

  beforeAll(async () => {
    t = await startTestApp();
    seeded = [];
    // Sequential, so timestamps and ids increase; spread over actors, actions, resources, chains.
    for (let i = 0; i < 30; i++) {
      const res = await post({
        actor: `actor-${i % 3}`,
        action: `thing.${i % 2 ? 'read' : 'write'}`,
        resource: i % 5 === 0 ? null : `res-${i % 4}`,
        chain: `list-${i % 2}`,
      });
      seeded.push(res.body.data);
    }
    await post({ actor: 'actor-0', action: 'thing.read', resource: 'res-1', chain: 'list-0' }, KEYS.globex);
  });
  afterAll(async () => {
    await t.close();
  });

  const newestFirst = (events: EventView[]) =>
    [...events].sort((a, b) =>
      a.createdAt === b.createdAt ? (a.id < b.id ? 1 : -1) : a.createdAt < b.createdAt ? 1 : -1,
    );

  async function allPages(query: string, limit: number): Promise<{ ids: string[]; pages: number }> {
    const ids: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const sep = query ? '&' : '?';
      const res = await get(
        `${query}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      ).expect(200);
      ids.push(...res.body.data.map((e: EventView) => e.id));
      expect(res.body.data.length).toBeLessThanOrEqual(limit);
      cursor = res.body.nextCursor;
      if (cursor === undefined) expect(Object.keys(res.body)).toEqual(['data']);
      pages++;
    } while (cursor);
    return { ids, pages };
  }

  it("lists the account's events newest first with the default page size of 50", async () => {
    const res = await get('').expect(200);
    expect(res.body.data.map((e: EventView) => e.id)).toEqual(newestFirst(seeded).map((e) => e.id));
    expect(res.body.nextCursor).toBeUndefined();
  });

  it('pages with limit and cursor without duplicates or gaps', async () => {
    const { ids, pages } = await allPages('', 7);
    expect(ids).toEqual(newestFirst(seeded).map((e) => e.id));
    expect(pages).toBe(5);
  });

  it.each([
    ['actor', '?actor=actor-1', (e: EventView) => e.actor === 'actor-1'],
    ['action', '?action=thing.read', (e: EventView) => e.action === 'thing.read'],
    ['resource', '?resource=res-2', (e: EventView) => e.resource === 'res-2'],
    [
      'actor and action',
      '?actor=actor-2&action=thing.write',
      (e: EventView) => e.actor === 'actor-2' && e.action === 'thing.write',
    ],
  ])('filters by %s, also across pages', async (_name, query, keep) => {
    const expected = newestFirst(seeded.filter(keep)).map((e) => e.id);
    expect(expected.length).toBeGreaterThan(2);
    expect((await allPages(query, 2)).ids).toEqual(expected);
  });

  it('filters by chain_id', async () => {
    const chainId = seeded[1]!.chain.id;
    expect((await allPages(`?chain_id=${chainId}`, 4)).ids).toEqual(
      newestFirst(seeded.filter((e) => e.chain.id === chainId)).map((e) => e.id),
    );
  });

  it('after and before are exclusive bounds on timestamp', async () => {
    const byTime = [...seeded].sort((a, b) => (a.timestamp < b.timestamp ? -1 : 1));
    const after = byTime[5]!.timestamp;
    const before = byTime[20]!.timestamp;
    const expected = newestFirst(seeded.filter((e) => e.timestamp > after && e.timestamp < before)).map((e) => e.id);
    expect((await allPages(`?after=${after}&before=${before}`, 3)).ids).toEqual(expected);
    const offset = (await get(`?after=${encodeURIComponent(after.replace('Z', '+00:00'))}`).expect(200)).body.data.map(
      (e: EventView) => e.id,
    );
    expect(offset).toEqual(newestFirst(seeded.filter((e) => e.timestamp > after)).map((e) => e.id));
  });

  it.each([
    ['year 0099', '0099-10-11T14:22:16Z', true],
    ['year 0000 behind an offset', '0000-01-01T00:30:00+01:00', true],
    ['a leap second', '2016-12-31T23:59:60Z', true],
    ['a leap second with a fraction and an offset', '2017-01-01T00:59:60.5+01:00', true],
    ['year 9999', '9999-12-31T23:59:59.999Z', false],
  ])('accepts %s as a bound (RFC 3339 date-time)', async (_name, instant, allBefore) => {
    const ids = (e: EventView) => e.id;
    const everything = (await get('?limit=200').expect(200)).body.data.map(ids);
    const after = (await get(`?limit=200&after=${encodeURIComponent(instant)}`).expect(200)).body.data.map(ids);
    const before = (await get(`?limit=200&before=${encodeURIComponent(instant)}`).expect(200)).body.data.map(ids);
    expect(after).toEqual(allBefore ? everything : []);
    expect(before).toEqual(allBefore ? [] : everything);
  });

  it('a leap second is the first instant of the next minute', async () => {
    const last = seeded[seeded.length - 1]!;
    const t0 = new Date(last.timestamp);
    if (t0.getUTCMilliseconds() !== 0 || t0.getUTCSeconds() !== 0) {
      // Read at the leap second before the minute the last event starts: same answer as that minute.
      const minute = new Date(Math.floor(t0.getTime() / 60_000) * 60_000);
      const leap = `${new Date(minute.getTime() - 60_000).toISOString().slice(0, 17)}60Z`;
      const atLeap = (await get(`?limit=200&after=${leap}`).expect(200)).body.data;
      const atMinute = (await get(`?limit=200&after=${minute.toISOString()}`).expect(200)).body.data;
      expect(atLeap).toEqual(atMinute);
    }
  });

  it("never shows another account's events, even with its chain_id", async () => {
    const theirs = (await get('', KEYS.globex).expect(200)).body.data;
    expect(theirs).toHaveLength(1);
    expect((await get(`?chain_id=${theirs[0].chain.id}`).expect(200)).body.data).toEqual([]);
    expect(
      (await get('?actor=actor-0&resource=res-1').expect(200)).body.data.map((e: EventView) => e.id),
    ).not.toContain(theirs[0].id);
  });

  it('pages without repeats or skips while new events are being appended', async () => {
    const before = new Set(seeded.map((e) => e.id));
    const seen: string[] = [];
    let cursor: string | undefined;
    let writer = 0;
    do {
      const res = await get(`?limit=4${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`).expect(200);
      seen.push(...res.body.data.map((e: EventView) => e.id));
      cursor = res.body.nextCursor;
      await Promise.all(
        [0, 1, 2].map((k) => post({ actor: `late-${writer}-${k}`, action: 'late.write', chain: `list-${k % 2}` })),
      );
      writer++;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of before) expect(seen).toContain(id);
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=0x10', 'limit'],
    ['limit=1e1', 'limit'],
    ['limit=%2B7', 'limit'],
    ['cursor=not-a-cursor!', 'cursor'],
    [`cursor=${Buffer.from('["2026-01-01T00:00:00.000Z","x"]').toString('base64url')}`, 'cursor'],
    ['after=yesterday', 'after'],
    ['before=2026-13-45T00:00:00Z', 'before'],
    ['after=2026-01-01T00:00:00', 'after'],
    ['after=2026-02-30T00:00:00Z', 'after'],
    ['after=2025-02-29T00:00:00Z', 'after'],
    ['after=2026-01-01T24:00:00Z', 'after'],
    ['after=2026-01-01T23:59:61Z', 'after'],
    ['after=2026-01-01T00:00:00%2B24:00', 'after'],
    ['chain_id=default', 'chain_id'],
    ['actor=', 'actor'],
    ['actor=a&actor=b', 'actor'],
    ['sort=asc', 'sort'],
  ])('400 VALIDATION_ERROR for %s', async (query, field) => {
    const res = await get(`?${query}`).expect(400);
    expect(res.body.error.code).toBe('VALIDATION_ERROR');
    expect(res.body.error.details.fields).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });

  it('accepts limit=200 and limit=1', async () => {
    expect((await get('?limit=200').expect(200)).body.data.length).toBeGreaterThan(30);
    const one = await get('?limit=1').expect(200);
    expect(one.body.data).toHaveLength(1);
    expect(typeof one.body.nextCursor).toBe('string');
  });
});
