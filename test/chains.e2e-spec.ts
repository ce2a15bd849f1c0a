import { GENESIS_HASH } from '@app/hashing';
import { assertChainIntact } from './support/chain-check';
import type { ChainView as ChainBody } from '../apps/api/src/chains/dto/chain.view';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UNKNOWN_CHAIN = 'chn_01ARZ3NDEKTSV4RRFFQ69G5FAV';

function helpers(t: () => TestApp) {
  const post = (chain: string, key: string = KEYS.acme) =>
    t()
      .http()
      .post('/v1/events')
      .set(...bearer(key))
      .send({ actor: 'alice', action: 'doc.read', chain })
      .expect(201);
  const list = (query: string, key: string = KEYS.acme) =>
    t()
      .http()
      .get(`/v1/chains${query}`)
      .set(...bearer(key));
  const status = (chainId: string, key: string = KEYS.acme) =>
    t()
      .http()
      .get(`/v1/chain/${chainId}/status`)
      .set(...bearer(key));
  return { post, list, status };
}

describe('GET /v1/chains', () => {
  let t: TestApp;
  const { post, list, status } = helpers(() => t);
  // Created one after another; the names are deliberately not in alphabetical order.
  const NAMES = ['zulu', 'alpha', 'mike', 'alpha.2', 'bravo'];
  const ids = new Map<string, string>();
  let theirs: string;

  beforeAll(async () => {
    t = await startTestApp();
    for (const name of NAMES) ids.set(name, (await post(name)).body.data.chain.id);
    await post('zulu');
    theirs = (await post('zulu', KEYS.globex)).body.data.chain.id;
    await post('globex-only', KEYS.globex);
  });
  afterAll(async () => {
    await t.close();
  });

  it("lists the account's chains oldest first, each a full Chain", async () => {
    const res = await list('').expect(200);
    expect(Object.keys(res.body)).toEqual(['data']);
    const chains = res.body.data as ChainBody[];
    expect(chains.map((c) => c.name)).toEqual(NAMES);
    expect(chains.map((c) => c.id)).toEqual(NAMES.map((n) => ids.get(n)));
    for (const c of chains) {
      expect(Object.keys(c).sort()).toEqual([
        'createdAt',
        'effectiveLegalHold',
        'effectiveRetentionDays',
        'eventCount',
        'firstPosition',
        'hashVersion',
        'id',
        'lastHash',
        'lastPosition',
        'legalHold',
        'legalHoldBy',
        'name',
        'retentionDays',
      ]);
      expect(c.createdAt).toMatch(ISO_MS);
      expect(c.lastHash).toMatch(/^[0-9a-f]{64}$/);
      expect(c.eventCount).toBe(c.lastPosition);
    }
    const createdAt = chains.map((c) => Date.parse(c.createdAt));
    expect([...createdAt].sort((a, b) => a - b)).toEqual(createdAt);
    expect(chains[0]).toMatchObject({ name: 'zulu', lastPosition: 2, eventCount: 2 });
    expect(chains[1]).toMatchObject({ name: 'alpha', lastPosition: 1, eventCount: 1 });
  });

  it('pages with limit=2 over 5 chains: 2 + 2 + 1, no duplicates, no gaps, no cursor on the last page', async () => {
    const pages: ChainBody[][] = [];
    let cursor: string | undefined;
    do {
      const res = await list(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`).expect(200);
      pages.push(res.body.data);
      cursor = res.body.nextCursor;
      if (cursor !== undefined) expect(typeof cursor).toBe('string');
      expect(pages.length).toBeLessThanOrEqual(3);
    } while (cursor);
    expect(pages.map((p) => p.length)).toEqual([2, 2, 1]);
    expect(pages.flat().map((c) => c.name)).toEqual(NAMES);
  });

  it('filters by exact name: a prefix of another name matches only itself', async () => {
    const alpha = (await list('?name=alpha').expect(200)).body;
    expect(alpha).toEqual({ data: [expect.objectContaining({ id: ids.get('alpha'), name: 'alpha' })] });
    const dotted = (await list('?name=alpha.2').expect(200)).body;
    expect(dotted.data.map((c: ChainBody) => c.id)).toEqual([ids.get('alpha.2')]);
    expect((await list('?name=alph').expect(200)).body).toEqual({ data: [] });
    expect((await list('?name=ALPHA').expect(200)).body).toEqual({ data: [] });
    expect((await list('?name=alpha%25').expect(400)).body.error.code).toBe('VALIDATION_ERROR');
  });

  it("never lists another account's chains, even one with the same name", async () => {
    const mine = (await list('?limit=200').expect(200)).body.data as ChainBody[];
    expect(mine.map((c) => c.id)).not.toContain(theirs);
    expect(mine.map((c) => c.name)).not.toContain('globex-only');
    const zulu = (await list('?name=zulu').expect(200)).body.data as ChainBody[];
    expect(zulu.map((c) => c.id)).toEqual([ids.get('zulu')]);
    const globex = (await list('', KEYS.globex).expect(200)).body.data as ChainBody[];
    expect(globex.map((c) => c.name)).toEqual(['zulu', 'globex-only']);
    expect(globex[0]).toMatchObject({ id: theirs, lastPosition: 1 });
  });

  it.each([
    ['limit=0', 'limit'],
    ['limit=201', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['cursor=not*base64', 'cursor'],
    [`cursor=${Buffer.from('["yesterday","chn_x"]').toString('base64url')}`, 'cursor'],
    ['name=', 'name'],
    ['name=a%20b', 'name'],
    ['name=a%2Fb', 'name'],
    [`name=${'n'.repeat(129)}`, 'name'],
    ['name=a&name=b', 'name'],
    ['chain_id=x', 'chain_id'],
    ['verbose=1', 'verbose'],
  ])('400 VALIDATION_ERROR for ?%s', async (query, field) => {
    const res = await list(`?${query}`).expect(400);
    expect(res.body).toEqual({
      error: { code: 'VALIDATION_ERROR', message: expect.any(String), details: { fields: expect.any(Array) } },
    });
    expect(res.body.error.details.fields).toEqual(expect.arrayContaining([expect.objectContaining({ field })]));
  });

  it('accepts the longest name, 128 characters of the allowed set', async () => {
    const name = `a.b_c:d-${'9'.repeat(120)}`;
    await post(name);
    expect((await list(`?name=${name}`).expect(200)).body.data.map((c: ChainBody) => c.name)).toEqual([name]);
  });

  it('keeps paging consistent while new chains are created, which come last', async () => {
    const first = (await list('?limit=3').expect(200)).body;
    const created = (await post('late-comer')).body.data.chain.id;
    const seen = [...first.data];
    let cursor: string | undefined = first.nextCursor;
    while (cursor) {
      const res = await list(`?limit=3&cursor=${encodeURIComponent(cursor)}`).expect(200);
      seen.push(...res.body.data);
      cursor = res.body.nextCursor;
    }
    const seenIds = seen.map((c: ChainBody) => c.id);
    expect(new Set(seenIds).size).toBe(seenIds.length);
    expect(seenIds.slice(0, NAMES.length)).toEqual(NAMES.map((n) => ids.get(n)));
    expect(seenIds[seenIds.length - 1]).toBe(created);
    await status(created).expect(200);
  });

  it('403 FORBIDDEN for a key without the read scope', async () => {
    expect((await list('', KEYS.acmeIngestOnly).expect(403)).body.error.code).toBe('FORBIDDEN');
    await list('', KEYS.acmeReadOnly).expect(200);
  });
});

describe('GET /v1/chain/:chainId/status', () => {
  let t: TestApp;
  const { post, list, status } = helpers(() => t);
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it("returns the chain head: the last event's position and hash", async () => {
    const first = (await post('orders')).body.data;
    const second = (await post('orders')).body.data;
    const res = await status(first.chain.id).expect(200);
    expect(res.body).toEqual({
      data: {
        id: first.chain.id,
        name: 'orders',
        hashVersion: 2,
        lastHash: second.hash,
        lastPosition: 2,
        eventCount: 2,
        createdAt: expect.stringMatching(ISO_MS),
        firstPosition: 1,
        retentionDays: null,
        effectiveRetentionDays: null,
        legalHold: false,
        legalHoldBy: null,
        effectiveLegalHold: false,
      },
    });
    const listed = (await list('?name=orders').expect(200)).body.data;
    expect(listed).toEqual([res.body.data]);
  });

  it('is consistent with the events right after 200 concurrent appends to one chain', async () => {
    const responses = await Promise.all(Array.from({ length: 200 }, () => post('hot')));
    const chainId = responses[0]!.body.data.chain.id as string;
    expect(new Set(responses.map((r) => r.body.data.chain.id))).toEqual(new Set([chainId]));
    const positions = responses.map((r) => r.body.data.chain.position as number).sort((a, b) => a - b);
    expect(positions).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));

    const head = (await status(chainId).expect(200)).body.data as ChainBody;
    const newest = (
      await t
        .http()
        .get(`/v1/events?chain_id=${chainId}&limit=1`)
        .set(...bearer(KEYS.acme))
        .expect(200)
    ).body.data[0];
    expect(newest.chain.position).toBe(200);
    expect(head).toMatchObject({ id: chainId, name: 'hot', lastPosition: 200, eventCount: 200, lastHash: newest.hash });
    expect(await assertChainIntact(t.dataSource, chainId)).toBe(200);
  });

  it('a chain row without events reports position 0 and the genesis hash', async () => {
    const [{ account_id: accountId }] = await t.dataSource.query(
      `SELECT audit_uuid_ulid('acc', account_id) AS account_id FROM chains WHERE name = 'orders'`,
    );
    const id = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X';
    await t.dataSource.query(
      `INSERT INTO chains (id, account_id, name) VALUES (audit_ulid_uuid($1), audit_ulid_uuid($2), 'empty')`,
      [id, accountId],
    );
    const res = await status(id).expect(200);
    expect(res.body.data).toEqual({
      id,
      name: 'empty',
      hashVersion: 2,
      lastHash: GENESIS_HASH,
      lastPosition: 0,
      eventCount: 0,
      createdAt: expect.stringMatching(ISO_MS),
      firstPosition: 1,
      retentionDays: null,
      effectiveRetentionDays: null,
      legalHold: false,
      legalHoldBy: null,
      effectiveLegalHold: false,
    });
  });

  it("404 NOT_FOUND, identically, for another account's chain, an unknown id and a malformed id", async () => {
    const theirs = (await post('secret-chain', KEYS.globex)).body.data.chain.id;
    await status(theirs, KEYS.globex).expect(200);
    const bodies = [];
    for (const id of [theirs, UNKNOWN_CHAIN, 'not-a-chain', `chn_${'Z'.repeat(300)}`]) {
      const res = await status(id).expect(404);
      expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String), details: {} } });
      expect(JSON.stringify(res.body)).not.toContain('secret');
      bodies.push(res.body.error.message.replace(id, '<id>'));
    }
    expect(new Set(bodies).size).toBe(1);
  });

  it('400 for any query parameter; 403 without the read scope', async () => {
    const chainId = (await post('orders')).body.data.chain.id;
    const res = await t
      .http()
      .get(`/v1/chain/${chainId}/status?verbose=1`)
      .set(...bearer(KEYS.acme))
      .expect(400);
    expect(res.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: { fields: [{ field: 'verbose', message: "unknown field 'verbose'" }] },
    });
    expect((await status(chainId, KEYS.acmeIngestOnly).expect(403)).body.error.code).toBe('FORBIDDEN');
  });
});
