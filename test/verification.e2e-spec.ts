import { GENESIS_HASH } from '@app/hashing';
import type { EventView as EventBody } from '../apps/api/src/events/dto/event.view';
import { answerHash } from './support/answer-hash';
import { bearer, KEYS, startTestApp, TestApp } from './support/test-app';

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The hash of `e` as the contract defines it, with some fields replaced. */
const hashOf = answerHash;

describe('GET /v1/events/:id/verify', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(async () => {
    await t.close();
  });

  const verify = (id: string, key: string = KEYS.acme) =>
    t
      .http()
      .get(`/v1/events/${id}/verify`)
      .set(...bearer(key));

  /** Appends `n` events to a new chain, one after another, and returns them in position order. */
  async function chainOf(name: string, n: number): Promise<EventBody[]> {
    const events: EventBody[] = [];
    for (let i = 0; i < n; i++) {
      const body = {
        actor: `user-${i}`,
        action: 'invoice.pay',
        resource: `invoice:${i}`,
        context: { amount: 100 + i, tags: ['a', 'é'] },
        chain: name,
      };
      events.push(
        (
          await t
            .http()
            .post('/v1/events')
            .set(...bearer(KEYS.acme))
            .send(body)
            .expect(201)
        ).body.data,
      );
    }
    return events;
  }

  /** Edits rows behind the service's back, as an attacker with database access would. */
  async function tamper(sql: string, params: unknown[]): Promise<void> {
    await t.dataSource.transaction(async (m) => {
      // Append-only triggers would refuse this; a superuser attacker can switch them off.
      await m.query('SET LOCAL session_replication_role = replica');
      await m.query(sql, params);
    });
  }

  it('an honest event is valid: the stored hash is recomputed and the link holds', async () => {
    const events = await chainOf('honest', 3);
    for (const e of events) {
      const res = await verify(e.id).expect(200);
      expect(Object.keys(res.body)).toEqual(['data']);
      expect(Object.keys(res.body.data)).toEqual([
        'valid',
        'errors',
        'eventHash',
        'computedHash',
        'chainIntact',
        'verifiedAt',
        'erased',
      ]);
      expect(res.body.data).toEqual({
        valid: true,
        errors: [],
        eventHash: e.hash,
        computedHash: e.hash,
        chainIntact: true,
        verifiedAt: expect.stringMatching(ISO_MS),
        // A version-2 event (docs/contract.md §17): the fields erased from it, none.
        erased: [],
      });
    }
  });

  it('the first event of a chain is valid against the genesis hash', async () => {
    const [first] = await chainOf('genesis', 1);
    expect(first!.previousHash).toBe(GENESIS_HASH);
    const res = await verify(first!.id).expect(200);
    expect(res.body.data).toMatchObject({ valid: true, errors: [], chainIntact: true, computedHash: hashOf(first!) });
  });

  it('(a) a changed actor: hash mismatch, chain link still intact', async () => {
    const [, victim, next] = await chainOf('tamper-actor', 3);
    await tamper(`UPDATE events SET actor = 'mallory' WHERE id = audit_ulid_uuid($1)`, [victim!.id]);
    const res = await verify(victim!.id).expect(200);
    const recomputed = hashOf(victim!, { actor: 'mallory' });
    expect(recomputed).not.toBe(victim!.hash);
    expect(res.body.data).toEqual({
      valid: false,
      errors: [
        `stored hash ${victim!.hash} does not match the hash recomputed from the event, ${recomputed}: the event was altered`,
      ],
      eventHash: victim!.hash,
      computedHash: recomputed,
      chainIntact: true,
      verifiedAt: expect.stringMatching(ISO_MS),
      erased: [],
    });
    // The next event links to the stored hash, which did not change.
    expect((await verify(next!.id).expect(200)).body.data).toMatchObject({ valid: true, chainIntact: true });
  });

  it('(b) a changed payload with a recomputed hash: the event itself verifies, the next one breaks', async () => {
    const [, victim, next] = await chainOf('tamper-rehash', 3);
    const forgedContext = { amount: 1000000, tags: ['a', 'é'] };
    const forgedHash = hashOf(victim!, { context: forgedContext });
    await tamper(`UPDATE events SET context = $1::jsonb, hash = decode($2, 'hex') WHERE id = audit_ulid_uuid($3)`, [
      JSON.stringify(forgedContext),
      forgedHash,
      victim!.id,
    ]);

    const own = (await verify(victim!.id).expect(200)).body.data;
    expect(own).toMatchObject({
      valid: true,
      errors: [],
      eventHash: forgedHash,
      computedHash: forgedHash,
      chainIntact: true,
    });

    const res = (await verify(next!.id).expect(200)).body.data;
    expect(res).toMatchObject({ valid: false, chainIntact: false, eventHash: next!.hash, computedHash: next!.hash });
    expect(res.errors).toEqual([
      `previousHash ${victim!.hash} does not match the hash of the event at position 2, ${forgedHash}: an event before it was altered, removed or renumbered`,
    ]);
  });

  it('(c) a deleted middle event: the next event reports its predecessor missing', async () => {
    const [first, victim, next] = await chainOf('tamper-delete', 3);
    await tamper(`DELETE FROM events WHERE id = audit_ulid_uuid($1)`, [victim!.id]);
    const res = (await verify(next!.id).expect(200)).body.data;
    expect(res).toMatchObject({ valid: false, chainIntact: false, eventHash: next!.hash, computedHash: next!.hash });
    expect(res.errors).toEqual(['the event at position 2 is missing: the chain has a gap before position 3']);
    await verify(victim!.id).expect(404);
    expect((await verify(first!.id).expect(200)).body.data.valid).toBe(true);
  });

  it('a forged first link (previousHash not the genesis hash) is reported even with a recomputed hash', async () => {
    const [first] = await chainOf('tamper-genesis', 1);
    const forgedPrevious = 'a'.repeat(64);
    const forgedHash = hashOf(first!, { previousHash: forgedPrevious });
    await tamper(
      `UPDATE events SET previous_hash = decode($1, 'hex'), hash = decode($2, 'hex') WHERE id = audit_ulid_uuid($3)`,
      [forgedPrevious, forgedHash, first!.id],
    );
    const res = (await verify(first!.id).expect(200)).body.data;
    expect(res).toMatchObject({ valid: false, chainIntact: false, computedHash: forgedHash });
    expect(res.errors).toEqual([expect.stringMatching(/previousHash of 64 zeros \(the genesis hash\), not a{64}$/)]);
  });

  it("404 NOT_FOUND, identically, for another account's event, an unknown id and a malformed id", async () => {
    const [mine] = await chainOf('secret-chain', 1);
    for (const [key, id] of [
      [KEYS.globex, mine!.id],
      [KEYS.acme, 'evt_01ARZ3NDEKTSV4RRFFQ69G5FAV'],
      [KEYS.acme, 'not-an-id'],
    ] as const) {
      const res = await verify(id, key).expect(404);
      expect(res.body).toEqual({ error: { code: 'NOT_FOUND', message: expect.any(String), details: {} } });
      expect(JSON.stringify(res.body)).not.toContain('secret');
    }
  });

  it('400 for any query parameter; 403 without the read scope', async () => {
    const [e] = await chainOf('params', 1);
    const res = await t
      .http()
      .get(`/v1/events/${e!.id}/verify?deep=true`)
      .set(...bearer(KEYS.acme))
      .expect(400);
    expect(res.body.error).toEqual({
      code: 'VALIDATION_ERROR',
      message: expect.any(String),
      details: { fields: [{ field: 'deep', message: "unknown field 'deep'" }] },
    });
    expect((await verify(e!.id, KEYS.acmeIngestOnly).expect(403)).body.error.code).toBe('FORBIDDEN');
    await verify(e!.id, KEYS.acmeReadOnly).expect(200);
  });
});
