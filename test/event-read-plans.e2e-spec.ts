import { digestApiKey } from '@app/auth';
import { ApiKeysRepository, EventSearchRepository, EventTailRepository } from '@app/database';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

type PlanNode = {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Scan Direction'?: string;
  Plans?: PlanNode[];
};
type Statement = { text: string; params: unknown[] };

/**
 * The indexes migration 1766100000000 fills to the brim (pk_events, ix_events_account_time,
 * ix_events_account_txid; docs/performance.md "storage per index") still serve the reads they exist
 * for: each repository's statement, captured, then planned for real on 3,000 analyzed events.
 */
describe('the reads of the filled event indexes (migration 1766100000000)', () => {
  let t: TestApp;
  let account: string;
  let since: string;
  let newest: string;

  beforeAll(async () => {
    t = await startTestApp();
    account = (await t.app.get(ApiKeysRepository).findActiveByDigest(digestApiKey(KEYS.acme)))!.accountId;
    const batch = (b: number) =>
      t
        .http()
        .post('/v1/events/batch')
        .set(...bearer(KEYS.acme))
        .send({
          events: Array.from({ length: 500 }, (_, i) => ({
            actor: `plan-${b}-${i}`,
            action: 'x.y',
            chain: `plan-${i % 8}`,
          })),
        })
        .expect(201);
    for (let b = 0; b < 5; b++) await batch(b);
    since = await t.app.get(EventTailRepository).currentSnapshot();
    const last = await batch(5);
    newest = (last.body as { data: { id: string }[] }).data.at(-1)!.id;
    await t.dataSource.query('ANALYZE events');
  });
  afterAll(async () => {
    await t.close();
  });

  /** What `read` sends through the `db` it is given (answering with no rows), planned for real. */
  async function planOf(read: (db: never) => Promise<unknown>): Promise<PlanNode[]> {
    let statement: Statement | undefined;
    const capture = {
      query: (text: string, params: unknown[]) => {
        statement = { text, params };
        return Promise.resolve([{ until: 'captured', id: null }]);
      },
    } as never;
    await read(capture);
    const [row] = await t.dataSource.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }[]>(
      `EXPLAIN (FORMAT JSON) ${statement!.text}`,
      statement!.params,
    );
    const nodes = (plan: PlanNode): PlanNode[] => [plan, ...(plan.Plans ?? []).flatMap(nodes)];
    return nodes(row!['QUERY PLAN'][0].Plan);
  }
  /** How each node reading `events` reads it: [node type, index, direction]; a bitmap's index scan too. */
  const eventScans = (plan: PlanNode[]) =>
    plan
      .filter((node) => node['Relation Name'] === 'events' || /^(pk|ix|uq)_events(_|$)/.test(node['Index Name'] ?? ''))
      .map((node) => [node['Node Type'], node['Index Name'] ?? null, node['Scan Direction'] ?? null]);

  it('lists a page, and the page after a cursor, in ix_events_account_time order without sorting', async () => {
    const search = t.app.get(EventSearchRepository);
    for (const cursor of [undefined, { time: new Date().toISOString(), id: newest }]) {
      const plan = await planOf((db) => search.list(account, {}, 51, cursor, db));
      expect(eventScans(plan)).toEqual([['Index Scan', 'ix_events_account_time', 'Backward']]);
      expect(plan.map((node) => node['Node Type'])).not.toContain('Sort');
    }
  });

  it('reads one event by pk_events', async () => {
    const plan = await planOf((db) => t.app.get(EventSearchRepository).findOwned(account, newest, db));
    expect(eventScans(plan)).toEqual([['Index Scan', 'pk_events', 'Forward']]);
  });

  it("reads a live tail's first page of a window (what committed since: few) by ix_events_account_txid", async () => {
    const tail = t.app.get(EventTailRepository);
    const plan = await planOf((db) => tail.committedBetween(account, {}, { since, until: null, after: null }, 500, db));
    expect(eventScans(plan)).toEqual([
      ['Bitmap Heap Scan', null, null],
      ['Bitmap Index Scan', 'ix_events_account_txid', null],
    ]);
  });
});
