import { computeEventHash, GENESIS_HASH } from '@app/hashing';
import type { EventView } from '../apps/api/src/events/dto/event.view';
import { answerHash } from './support/answer-hash';
import { assertChainIntact } from './support/chain-check';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

const SALT = /^[0-9a-f]{32}$/;

/** Hash version 2 (docs/contract.md §17): new chains hash salted commitments; chains made before keep version 1. */
describe('hash version 2', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const get = (path: string, key = KEYS.acme) =>
    t
      .http()
      .get(path)
      .set(...bearer(key));
  const append = async (body: object): Promise<EventView> =>
    (
      await t
        .http()
        .post('/v1/events')
        .set(...bearer(KEYS.acme))
        .send(body)
        .expect(201)
    ).body.data as EventView;

  it('gives a new chain hashVersion 2 and its events salts for exactly the fields that hold a value', async () => {
    const first = await append({ actor: 'alice@example.com', action: 'user.login', chain: 'v2-basic' });
    const second = await append({
      actor: 'bob@example.com',
      action: 'doc.update',
      resource: 'doc:42',
      context: { ip: '10.0.0.1', ua: 'Mozilla/5.0 (é)', nested: { list: [1, 2.5, null] } },
      chain: 'v2-basic',
    });
    const status = (await get(`/v1/chain/${first.chain.id}/status`).expect(200)).body.data;
    expect(status.hashVersion).toBe(2);

    expect(first.hashing).toEqual({ version: 2, salts: { actor: expect.stringMatching(SALT) }, commitments: {} });
    expect(first.erased).toEqual([]);
    expect(second.hashing).toEqual({
      version: 2,
      salts: {
        actor: expect.stringMatching(SALT),
        resource: expect.stringMatching(SALT),
        context: {
          ip: expect.stringMatching(SALT),
          ua: expect.stringMatching(SALT),
          nested: expect.stringMatching(SALT),
        },
      },
      commitments: {},
    });
    // A salt for each field of each event, never repeated.
    const salts = [first.hashing!.salts.actor, second.hashing!.salts.actor, second.hashing!.salts.resource];
    salts.push(...Object.values(second.hashing!.salts.context!));
    expect(new Set(salts).size).toBe(salts.length);

    // The hashes follow the contract's text, recomputed here without the service's hashing code, and not §3's rule.
    expect(first.previousHash).toBe(GENESIS_HASH);
    expect(first.hash).toBe(answerHash(first));
    expect(second.hash).toBe(answerHash(second));
    expect(second.previousHash).toBe(first.hash);
    expect(second.hash).not.toBe(computeEventHash({ ...second, chainId: second.chain.id, position: 2 }));
    // A changed value or salt no longer gives the hash.
    expect(answerHash(second, { actor: 'mallory' })).not.toBe(second.hash);
    expect(
      answerHash(second, {
        hashing: { ...second.hashing!, salts: { ...second.hashing!.salts, actor: '0'.repeat(32) } },
      }),
    ).not.toBe(second.hash);

    // Every read answers the same hashing; no read serves the seed the salts come from.
    const read = (await get(`/v1/events/${second.id}`).expect(200)).body.data;
    expect(read).toEqual(second);
    const listed = (await get(`/v1/events?chain_id=${first.chain.id}`).expect(200)).body.data as EventView[];
    expect(listed.find((e) => e.id === second.id)).toEqual(second);
    expect(JSON.stringify(listed)).not.toMatch(/seed/i);
  });

  it('verifies version-2 events one by one and as a whole chain, and the stored rows re-hash', async () => {
    const events: EventView[] = [];
    for (let i = 0; i < 5; i++)
      events.push(
        await append({
          actor: `user-${i}`,
          action: 'invoice.pay',
          resource: i % 2 ? null : `invoice:${i}`,
          context: { n: i },
          chain: 'v2-verify',
        }),
      );
    for (const e of events) {
      const verdict = (await get(`/v1/events/${e.id}/verify`).expect(200)).body.data;
      expect(verdict).toMatchObject({ valid: true, chainIntact: true, computedHash: e.hash, erased: [] });
    }
    const whole = (await get(`/v1/chain/${events[0]!.chain.id}/verify`).expect(200)).body.data;
    expect(whole.valid).toBe(true);
    expect(await assertChainIntact(t.dataSource, events[0]!.chain.id)).toBe(5);
  });

  it('reports a version-2 event whose value was changed behind the service as a hash mismatch', async () => {
    const e = await append({ actor: 'carol', action: 'doc.read', context: { ip: '10.0.0.2' }, chain: 'v2-tamper' });
    await t.dataSource.transaction(async (m) => {
      await m.query('SET LOCAL session_replication_role = replica');
      await m.query(`UPDATE events SET context = '{"ip":"10.9.9.9"}' WHERE id = audit_ulid_uuid($1)`, [e.id]);
    });
    const verdict = (await get(`/v1/events/${e.id}/verify`).expect(200)).body.data;
    expect(verdict).toMatchObject({ valid: false, chainIntact: true });
    expect(verdict.computedHash).not.toBe(e.hash);
    expect((await get(`/v1/chain/${e.chain.id}/verify`).expect(200)).body.data.valid).toBe(false);
  });

  it('keeps version 1 for a chain made before (hash_version 1): no hashing, §3 rule', async () => {
    const [account] = await t.dataSource.query<{ id: string }[]>(
      `SELECT audit_uuid_ulid('acc', id) AS id FROM accounts WHERE name = 'acme'`,
    );
    await t.dataSource.query(
      `INSERT INTO chains (id, account_id, name, hash_version) VALUES (audit_ulid_uuid('chn_01KAR2Y6T0F5M3Q8W9Z1B4C7D2'), audit_ulid_uuid($1), 'v1-old', 1)`,
      [account!.id],
    );
    const e = await append({ actor: 'dave', action: 'doc.read', context: { a: 1 }, chain: 'v1-old' });
    expect(e.hashing).toBeUndefined();
    expect(e.erased).toBeUndefined();
    expect(e.hash).toBe(computeEventHash({ ...e, chainId: e.chain.id, position: 1 }));
    expect((await get(`/v1/chain/${e.chain.id}/status`).expect(200)).body.data.hashVersion).toBe(1);
    const verdict = (await get(`/v1/events/${e.id}/verify`).expect(200)).body.data;
    expect(verdict.valid).toBe(true);
    expect(verdict.erased).toBeUndefined();
    expect((await get(`/v1/chain/${e.chain.id}/verify`).expect(200)).body.data.valid).toBe(true);
  });
});
