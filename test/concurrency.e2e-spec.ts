import { assertChainIntact } from './support/chain-check';
import { bearer, freshDatabase, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';

type Posted = { status: number; body: { data: { id: string; chain: { id: string; position: number } } } };

async function appendMany(t: TestApp, count: number, chainOf: (i: number) => string): Promise<Posted[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send({ actor: `user-${i}`, action: 'load.append', context: { i }, chain: chainOf(i) }),
    ),
  );
}

describe('concurrent appends', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  it('400 concurrent appends to one chain leave one contiguous, correctly linked chain', async () => {
    const results = await appendMany(t, 400, () => 'hot');
    expect(results.map((r) => r.status)).toEqual(Array(400).fill(201));
    const positions = results.map((r) => r.body.data.chain.position).sort((a, b) => a - b);
    expect(positions).toEqual(Array.from({ length: 400 }, (_, i) => i + 1));
    expect(await assertChainIntact(t.dataSource, results[0]!.body.data.chain.id)).toBe(400);
  });

  it('concurrent first appends to new chains create each chain exactly once', async () => {
    const results = await appendMany(t, 240, (i) => `fresh-${i % 12}`);
    expect(results.every((r) => r.status === 201)).toBe(true);
    const chainIds = new Map<string, Set<string>>();
    results.forEach((r, i) => {
      const name = `fresh-${i % 12}`;
      chainIds.set(name, (chainIds.get(name) ?? new Set()).add(r.body.data.chain.id));
    });
    for (const ids of chainIds.values()) expect(ids.size).toBe(1);
    for (const ids of chainIds.values()) expect(await assertChainIntact(t.dataSource, [...ids][0]!)).toBe(20);
  });

  it('a batch mixing many chains keeps every chain intact and answers each request with its own event', async () => {
    const results = await appendMany(t, 300, (i) => `mix-${i % 30}`);
    results.forEach((r, i) => expect(r.body.data).toMatchObject({ actor: `user-${i}`, context: { i } }));
    const chains = new Set(results.map((r) => r.body.data.chain.id));
    expect(chains.size).toBe(30);
    for (const id of chains) expect(await assertChainIntact(t.dataSource, id)).toBe(10);
  });
});

// Two service instances need two connections to one database; the embedded PGlite is one
// process's single-session database, so this runs where a PostgreSQL server is available (CI).
(usingPostgres() ? describe : describe.skip)('two service instances on one database', () => {
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    const database = await freshDatabase();
    [a, b] = [await startTestApp({}, database), await startTestApp({}, database)];
  });
  afterAll(async () => {
    await a.close();
    await b.close();
  });

  it('interleaved appends through both instances to one new chain never fork it', async () => {
    const both = await Promise.all([appendMany(a, 250, () => 'shared'), appendMany(b, 250, () => 'shared')]);
    const results = both.flat();
    expect(results.every((r) => r.status === 201)).toBe(true);
    expect(new Set(results.map((r) => r.body.data.chain.id)).size).toBe(1);
    expect(await assertChainIntact(a.dataSource, results[0]!.body.data.chain.id)).toBe(500);
  });

  it('both instances spreading over the same 20 chains keep all of them intact', async () => {
    const both = await Promise.all([
      appendMany(a, 200, (i) => `spread-${i % 20}`),
      appendMany(b, 200, (i) => `spread-${(i * 7) % 20}`),
    ]);
    const chains = new Set(both.flat().map((r) => r.body.data.chain.id));
    expect(chains.size).toBe(20);
    for (const id of chains) expect(await assertChainIntact(b.dataSource, id)).toBe(20);
  });
});
