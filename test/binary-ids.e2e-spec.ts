import { ulid } from 'ulid';
import { ulidToUuid } from '@app/common';
import { BinaryIds1765900000000 } from '@app/database/migrations/1765900000000-binary-ids';
import { ActionSchemas1766200000000 } from '@app/database/migrations/1766200000000-action-schemas';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

/**
 * Migration 1765900000000: event, chain and account ids stored as their ULID's 16 bytes (uuid),
 * `evt_`, `chn_`, `acc_` and the ULID everywhere else. Its SQL functions agree with libs/common's codec, and the rewrite in both
 * directions gives every event back with its id, its place in the listing order and its hash.
 */
describe('ids stored as uuid (migration 1765900000000)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const sql = <R>(text: string, values: unknown[] = []) => t.dataSource.query<R[]>(text, values);

  it('converts as libs/common does (audit_ulid_uuid, audit_uuid_ulid), and refuses what is not a stored id', async () => {
    const ids = [
      ...Array.from({ length: 500 }, () => `evt_${ulid()}`),
      'evt_00000000000000000000000000',
      'evt_7ZZZZZZZZZZZZZZZZZZZZZZZZZ',
      'evt_0123456789ABCDEFGHJKMNPQRS',
      'evt_7TVWXYZ0123456789ABCDEFGHJ',
    ];
    const rows = await sql<{ id: string; stored: string; back: string }>(
      `SELECT id, audit_ulid_uuid(id)::text AS stored, audit_uuid_ulid('evt', audit_ulid_uuid(id)) AS back
         FROM unnest($1::text[]) AS i(id)`,
      [ids],
    );
    expect(rows.map((r) => r.stored)).toEqual(ids.map(ulidToUuid));
    expect(rows.map((r) => r.back)).toEqual(ids);
    for (const bad of [
      'evt_8ZZZZZZZZZZZZZZZZZZZZZZZZZ',
      'evt_01ARZ3NDEKTSV4RRFFQ69G5FAI',
      'evt_x',
      'evt_01arz3ndektsv4rrffq69g5fav',
    ]) {
      await expect(sql(`SELECT audit_ulid_uuid($1)`, [bad])).rejects.toThrow(/not a prefixed ULID of 128 bits/);
    }
  });

  it('stores 16 bytes an id, and every answer reads as before the rewrite back to text and again to bytes', async () => {
    const http = t.http;
    const appended: { id: string }[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send({ actor: `user-${i % 3}`, action: 'ids.check', chain: `ids-${i % 2}`, context: { n: i } })
        .expect(201);
      appended.push(res.body.data);
    }
    const columns = await sql<{ name: string; type: string }>(
      `SELECT c.relname || '.' || a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type
         FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind = 'r' AND NOT a.attisdropped
          AND (a.attname IN ('account_id', 'chain_id') OR (a.attname = 'id' AND c.relname IN ('events', 'chains', 'accounts')))
        ORDER BY 1`,
    );
    // Every column of an event's, a chain's or an account's id, in every table (keys', destinations' and erasures' own ids stay text).
    expect(columns.length).toBeGreaterThanOrEqual(17);
    expect(columns.filter((c) => c.type !== 'uuid')).toEqual([]);
    const [sizes] = await sql<{ id: number; account: number; chain: number }>(
      `SELECT max(pg_column_size(id))::int AS id, max(pg_column_size(account_id))::int AS account,
              max(pg_column_size(chain_id))::int AS chain FROM events`,
    );
    expect(sizes).toEqual({ id: 16, account: 16, chain: 16 });

    const read = async () => {
      const list = await http()
        .get('/v1/events?limit=100')
        .set(...bearer(KEYS.acme))
        .expect(200);
      const one = await http()
        .get(`/v1/events/${appended[5]!.id}`)
        .set(...bearer(KEYS.acme))
        .expect(200);
      const verify = await http()
        .get(`/v1/events/${appended[7]!.id}/verify`)
        .set(...bearer(KEYS.acme))
        .expect(200);
      const chain = await http()
        .get(`/v1/chain/${list.body.data[0].chain.id}/verify`)
        .set(...bearer(KEYS.acme))
        .expect(200);
      const unstamped = ({ verifiedAt, ...rest }: { verifiedAt: string; valid: boolean }) => {
        expect(verifiedAt).toBeTruthy();
        return rest;
      };
      return {
        list: list.body.data,
        one: one.body.data,
        verify: unstamped(verify.body.data),
        chain: unstamped(chain.body.data),
      };
    };
    const before = await read();
    expect(before.list.map((e: { id: string }) => e.id).sort()).toEqual(appended.map((e) => e.id).sort());
    expect([before.verify.valid, before.chain.valid]).toEqual([true, true]);

    const runner = t.dataSource.createQueryRunner();
    try {
      await runner.startTransaction();
      // 1766200000000's action schemas refer to the accounts' binary ids: undone around it.
      await new ActionSchemas1766200000000().down(runner);
      await new BinaryIds1765900000000().down(runner);
      const [text] = await runner.query(`SELECT id, account_id, chain_id FROM events ORDER BY id LIMIT 1`);
      expect(text).toEqual({
        id: expect.stringMatching(/^evt_[0-7][0-9A-HJKMNP-TV-Z]{25}$/),
        account_id: expect.stringMatching(/^acc_[0-7][0-9A-HJKMNP-TV-Z]{25}$/),
        chain_id: expect.stringMatching(/^chn_[0-7][0-9A-HJKMNP-TV-Z]{25}$/),
      });
      await new BinaryIds1765900000000().up(runner);
      await new ActionSchemas1766200000000().up(runner);
      await runner.commitTransaction();
    } finally {
      await runner.release();
    }
    const after = await read();
    expect(after).toEqual(before);
  });

  it("q's chain_id: compares the stored id: another kind's id, an id of no chain and a non-id match nothing (not a 500)", async () => {
    const list = async (q: string) =>
      (
        await t
          .http()
          .get(`/v1/events?limit=100&q=${encodeURIComponent(q)}`)
          .set(...bearer(KEYS.acme))
          .expect(200)
      ).body.data as { id: string; chain: { id: string } }[];
    const all = await list('action:ids.check');
    const chainId = all[0]!.chain.id;
    const inChain = all.filter((e) => e.chain.id === chainId).map((e) => e.id);
    expect(inChain.length).toBeGreaterThan(0);
    expect((await list(`action:ids.check chain_id:${chainId}`)).map((e) => e.id)).toEqual(inChain);
    for (const other of [`evt_${chainId.slice(4)}`, 'chn_8ZZZZZZZZZZZZZZZZZZZZZZZZZ', 'payments'])
      expect(await list(`action:ids.check chain_id:${other}`)).toEqual([]);
    expect(await list('action:ids.check -chain_id:payments')).toHaveLength(all.length);
  });
});
