import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EntityManager } from 'typeorm';
import {
  eventLeafHash,
  extendTree,
  LOWEST_STORED_LEVEL,
  GENESIS_HASH,
  parseCheckpoint,
  verifyConsistency,
  verifyInclusion,
} from '@app/hashing';
import { run } from '../apps/cli/src/cli';
import { readChainEvents, rehash } from './support/chain-check';
import { independentRoot } from './support/rfc9162';
import { bearer, exportJsonText, KEYS, startTestApp, TestApp } from './support/test-app';

/**
 * Merkle proofs (docs/contract.md §10) on the real database: every proof the API returns verifies with
 * libs/hashing's RFC 9162 verifier, every root equals the one computed independently
 * (test/support/rfc9162.ts) from the exported event hashes, and a rewritten history, tree
 * included, is exposed by /verify, by the proofs against the old root and by the CLI.
 */
describe('Merkle proofs', () => {
  let t: TestApp;
  let vkey: string;
  let work: string;

  beforeAll(async () => {
    t = await startTestApp({ verifyPageSize: 7 });
    work = mkdtempSync(join(tmpdir(), 'audit-proofs-'));
    vkey = (await t.http().get('/v1/checkpoint-key').expect(200)).text.trim();
  });
  afterAll(async () => {
    await t.close();
    rmSync(work, { recursive: true, force: true });
  });

  const get = (path: string, key: string = KEYS.acme) =>
    t
      .http()
      .get(path)
      .set(...bearer(key));
  const post = (chain: string, i: number) =>
    t
      .http()
      .post('/v1/events')
      .set(...bearer(KEYS.acme))
      .send({ actor: `user_${i % 5}`, action: 'doc.update', resource: `doc:${i}`, context: { i }, chain });

  interface Chain {
    id: string;
    /** Exported event ids and hashes, in position order. */
    events: { id: string; hash: string }[];
  }

  /** Appends `count` events to `name`, several requests at once (so transactions carry several chains). */
  async function grow(name: string, count: number, from = 1): Promise<void> {
    for (let i = from; i < from + count; i += 8)
      await Promise.all(Array.from({ length: Math.min(8, from + count - i) }, (_, k) => post(name, i + k).expect(201)));
  }

  /** Every chain of acme, from the export: ids and hashes in position order. */
  async function exported(): Promise<Map<string, Chain>> {
    const text = await exportJsonText(t, KEYS.acme);
    const chains = new Map<string, Chain & { name: string }>();
    const events = (
      JSON.parse(text) as {
        data: { id: string; hash: string; chain: { id: string; name: string; position: number } }[];
      }
    ).data;
    for (const e of events) {
      const chain = chains.get(e.chain.name) ?? { id: e.chain.id, name: e.chain.name, events: [] };
      chain.events[e.chain.position - 1] = { id: e.id, hash: e.hash };
      chains.set(e.chain.name, chain);
    }
    return chains;
  }

  /** Runs `requests` ten at a time. */
  async function inParallel<T>(requests: (() => Promise<T>)[]): Promise<T[]> {
    const results: T[] = [];
    for (let i = 0; i < requests.length; i += 10)
      results.push(...(await Promise.all(requests.slice(i, i + 10).map((r) => r()))));
    return results;
  }

  const hexes = (proof: string[]): Buffer[] => proof.map((h) => Buffer.from(h, 'hex'));
  const rootOf = (chain: Chain, size: number): string =>
    independentRoot(chain.events.slice(0, size).map((e) => e.hash));

  describe('on chains of many sizes', () => {
    // Every size up to 20, both sides of 32, then trees of several full and partial subtrees.
    const GROWN_TOGETHER = 20;
    const SIZES = [...Array.from({ length: GROWN_TOGETHER }, (_, i) => i + 1), 31, 32, 33, 64, 100, 129];
    let chains: Map<string, Chain>;

    beforeAll(async () => {
      // Interleaved across chains, so that one transaction often extends several trees.
      for (let round = 0; round < GROWN_TOGETHER; round += 8) {
        await Promise.all(
          SIZES.filter((n) => n > round).map((n) =>
            grow(`tree-${n}`, Math.min(8, n - round, GROWN_TOGETHER - round), round + 1),
          ),
        );
      }
      for (const n of SIZES.filter((s) => s > GROWN_TOGETHER))
        await grow(`tree-${n}`, n - GROWN_TOGETHER, GROWN_TOGETHER + 1);
      chains = await exported();
      expect(SIZES.map((n) => chains.get(`tree-${n}`)?.events.length)).toEqual(SIZES);
    }, 120_000);

    it('gives inclusion proofs that verify, for every event at the current size and, up to 12 events, at every size', async () => {
      const checks: (() => Promise<void>)[] = [];
      for (const n of SIZES) {
        const chain = chains.get(`tree-${n}`)!;
        chain.events.forEach((event, i) => {
          const position = i + 1;
          const sizes = n <= 12 ? Array.from({ length: n - i }, (_, k) => position + k) : [undefined];
          for (const size of sizes)
            checks.push(async () => {
              const res = await get(`/v1/events/${event.id}/proof${size ? `?size=${size}` : ''}`).expect(200);
              const proof = res.body.data;
              const N = size ?? n;
              expect(proof).toEqual({
                chainId: chain.id,
                position,
                leafIndex: i,
                size: N,
                eventHash: event.hash,
                rootHash: rootOf(chain, N),
                proof: expect.any(Array),
              });
              const leaf = eventLeafHash(event.hash);
              expect(verifyInclusion(i, N, leaf, hexes(proof.proof), Buffer.from(proof.rootHash, 'hex'))).toBe(true);
              // Not a proof of any other leaf.
              if (N > 1) {
                const other = (i + 1) % N;
                expect(verifyInclusion(other, N, leaf, hexes(proof.proof), Buffer.from(proof.rootHash, 'hex'))).toBe(
                  false,
                );
              }
            });
        });
      }
      await inParallel(checks);
    }, 120_000);

    it('gives consistency proofs that verify, for every pair of sizes up to 13 events and from every size to the last above', async () => {
      const checks: (() => Promise<void>)[] = [];
      for (const n of SIZES) {
        const chain = chains.get(`tree-${n}`)!;
        for (let to = n <= 13 ? 0 : n; to <= n; to++) {
          for (let from = 0; from <= to; from++) {
            checks.push(async () => {
              const res = await get(`/v1/chain/${chain.id}/consistency?from=${from}&to=${to}`).expect(200);
              const body = res.body.data;
              expect(body).toEqual({
                chainId: chain.id,
                from,
                to,
                fromRoot: rootOf(chain, from),
                toRoot: rootOf(chain, to),
                proof: expect.any(Array),
              });
              if (from === 0 || from === to) expect(body.proof).toEqual([]);
              const [fromRoot, toRoot] = [Buffer.from(body.fromRoot, 'hex'), Buffer.from(body.toRoot, 'hex')];
              expect(verifyConsistency(from, to, fromRoot, toRoot, hexes(body.proof))).toBe(true);
              if (from > 0 && from < to) {
                const wrong = Buffer.from(rootOf(chain, from - 1), 'hex');
                expect(verifyConsistency(from, to, wrong, toRoot, hexes(body.proof))).toBe(false);
              }
            });
          }
        }
      }
      await inParallel(checks);
    }, 120_000);

    it('signs checkpoints whose root is the one computed independently from the exported event hashes', async () => {
      for (const n of [1, 2, 3, 7, 8, 9, 31, 32, 33, 64, 100, 129]) {
        const chain = chains.get(`tree-${n}`)!;
        const note = (await get(`/v1/chain/${chain.id}/checkpoint`).expect(200)).text;
        const { size, hash } = parseCheckpoint(note.slice(0, note.lastIndexOf('\n\n') + 1));
        expect(size).toBe(n);
        expect(hash.toString('hex')).toBe(rootOf(chain, n));
      }
    });
  });

  describe('validation and tenancy', () => {
    let chain: Chain;
    beforeAll(async () => {
      await grow('validate', 5);
      chain = (await exported()).get('validate')!;
    });

    it.each([
      ['size 0', '?size=0'],
      ['a size below the position', '?size=2'],
      ['a size above the chain', '?size=6'],
      ['an empty size', '?size='],
      ['a fraction', '?size=3.5'],
      ['a negative size', '?size=-3'],
      ['an exponent', '?size=3e0'],
      ['a leading zero', '?size=03'],
      ['a word', '?size=three'],
      ['a repeated size', '?size=3&size=4'],
      ['an unknown parameter', '?size=3&limit=1'],
      ['a size of 2^53', '?size=9007199254740992'],
      ['a hexadecimal size', '?size=0x3'],
    ])('refuses an inclusion proof with %s (400)', async (_, query) => {
      const res = await get(`/v1/events/${chain.events[2]!.id}/proof${query}`).expect(400);
      expect(res.body.error).toMatchObject({
        code: 'VALIDATION_ERROR',
        details: { fields: [{ field: query.includes('limit') ? 'limit' : 'size', message: expect.any(String) }] },
      });
    });

    it.each([
      ['no parameter', ''],
      ['no to', '?from=1'],
      ['no from', '?to=1'],
      ['from above to', '?from=3&to=2'],
      ['to above the chain', '?from=1&to=6'],
      ['a fraction', '?from=1.5&to=2'],
      ['a negative from', '?from=-1&to=2'],
      ['an empty to', '?from=1&to='],
      ['an unknown parameter', '?from=1&to=2&size=3'],
      ['to of 2^53', '?from=1&to=9007199254740992'],
      ['from and to of 2^53', '?from=9007199254740992&to=9007199254740992'],
      ['to of the largest safe integer', '?from=1&to=9007199254740991'],
      ['to of 17 digits', '?from=1&to=12345678901234567'],
      ['a hexadecimal to', '?from=1&to=0x5'],
      ['a signed to', '?from=1&to=%2B5'],
    ])('refuses a consistency proof with %s (400)', async (_, query) => {
      const res = await get(`/v1/chain/${chain.id}/consistency${query}`).expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
      expect(res.body.error.details.fields.length).toBeGreaterThan(0);
    });

    it('accepts the edges: size = position, size = the chain, from = to = 0, from = to = the chain', async () => {
      await get(`/v1/events/${chain.events[2]!.id}/proof?size=3`).expect(200);
      await get(`/v1/events/${chain.events[2]!.id}/proof?size=5`).expect(200);
      expect((await get(`/v1/chain/${chain.id}/consistency?from=0&to=0`).expect(200)).body.data).toMatchObject({
        fromRoot: independentRoot([]),
        toRoot: independentRoot([]),
        proof: [],
      });
      await get(`/v1/chain/${chain.id}/consistency?from=5&to=5`).expect(200);
    });

    it("answers 404 for another account's event or chain, an unknown or malformed chain; 401 without a key; 403 without read", async () => {
      expect((await get(`/v1/events/${chain.events[0]!.id}/proof`, KEYS.globex).expect(404)).body.error.code).toBe(
        'NOT_FOUND',
      );
      expect(
        (await get(`/v1/chain/${chain.id}/consistency?from=0&to=1`, KEYS.globex).expect(404)).body.error.code,
      ).toBe('NOT_FOUND');
      await get(`/v1/events/evt_01JDQ8Z5X3N4K7M2P9R6T0V1WA/proof`).expect(404);
      await get(`/v1/chain/chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X/consistency?from=0&to=0`).expect(404);
      await get(`/v1/chain/${chain.id}/consistency?from=1&to=9007199254740991`, KEYS.globex).expect(404);
      expect(
        (await get(`/v1/chain/${chain.id}/consistency?from=1&to=9007199254740992`, KEYS.globex).expect(400)).body.error
          .details.fields,
      ).toEqual([{ field: 'to', message: 'to must be an integer between 0 and 9007199254740991' }]);
      await get(`/v1/chain/not-a-chain/consistency?from=0&to=0`).expect(404);
      await get(`/v1/events/not-an-event/proof`).expect(404);
      await t.http().get(`/v1/events/${chain.events[0]!.id}/proof`).expect(401);
      await get(`/v1/events/${chain.events[0]!.id}/proof`, KEYS.acmeIngestOnly).expect(403);
      await get(`/v1/chain/${chain.id}/consistency?from=0&to=1`, KEYS.acmeIngestOnly).expect(403);
      await get(`/v1/events/${chain.events[0]!.id}/proof`, KEYS.acmeReadOnly).expect(200);
    });
  });

  describe('the offline CLI on honest proofs', () => {
    it('verifies an inclusion proof against a checkpoint and a consistency proof between two (exit 0)', async () => {
      await grow('cli-honest', 6);
      const first = (await exported()).get('cli-honest')!;
      const older = (await get(`/v1/chain/${first.id}/checkpoint`).expect(200)).text;
      await grow('cli-honest', 5, 7);
      const chain = (await exported()).get('cli-honest')!;
      const newer = (await get(`/v1/chain/${chain.id}/checkpoint`).expect(200)).text;
      const inclusion = (await get(`/v1/events/${chain.events[3]!.id}/proof`).expect(200)).text;
      expect((await cli('verify-proof', inclusion, { '--checkpoint': newer })).code).toBe(0);
      const consistency = (await get(`/v1/chain/${chain.id}/consistency?from=6&to=11`).expect(200)).text;
      expect((await cli('verify-consistency', consistency, { '--old': older, '--new': newer })).code).toBe(0);
    });
  });

  /** The CLI on files written from these texts: its exit code and report. */
  async function cli(
    command: string,
    proof: string,
    notes: Record<string, string>,
  ): Promise<{ code: number; out: string; err: string }> {
    const dir = mkdtempSync(join(work, 'run-'));
    writeFileSync(join(dir, 'input.json'), proof);
    const args = [command, join(dir, 'input.json')];
    for (const [flag, note] of Object.entries(notes)) {
      writeFileSync(join(dir, `${flag.slice(2)}.txt`), note);
      args.push(flag, join(dir, `${flag.slice(2)}.txt`));
    }
    args.push('--key', vkey);
    let out = '';
    let err = '';
    const code = await run(args, { out: (s) => (out += s), err: (s) => (err += s), env: {} });
    return { code, out, err };
  }

  describe('a history rewritten after a checkpoint, Merkle tree included', () => {
    /** What a database administrator can do: triggers off for one transaction. */
    async function tamper(work: (m: EntityManager) => Promise<void>): Promise<void> {
      await t.dataSource.transaction(async (m) => {
        await m.query('SET LOCAL session_replication_role = replica');
        await work(m);
      });
    }

    /** Edits the event at `position`, recomputes every later hash, moves the head and rebuilds the chain's tree. */
    async function rewrite(chainId: string, position: number): Promise<void> {
      await tamper(async (m) => {
        const rows = await readChainEvents(m, chainId);
        let previous = GENESIS_HASH;
        const hashes: string[] = [];
        for (const r of rows) {
          if (r.position === position) r.action = 'doc.delete';
          if (r.position >= position) {
            r.hash = rehash(r, previous);
            await m.query(
              `UPDATE events SET action = $1, previous_hash = decode($2, 'hex'), hash = decode($3, 'hex') WHERE id = audit_ulid_uuid($4)`,
              [r.action, previous, r.hash, r.id],
            );
          }
          previous = r.hash;
          hashes.push(r.hash);
        }
        await m.query(`UPDATE chains SET last_hash = decode($1, 'hex') WHERE id = audit_ulid_uuid($2)`, [
          previous,
          chainId,
        ]);
        await m.query(`DELETE FROM merkle_nodes WHERE chain_id = audit_ulid_uuid($1)`, [chainId]);
        // Every stored node recomputed; the leaves (not stored) follow the events.
        const nodes = extendTree(0, [], hashes.map(eventLeafHash)).nodes.filter(
          ({ level }) => level >= LOWEST_STORED_LEVEL,
        );
        await m.query(
          `INSERT INTO merkle_nodes (chain_id, level, "index", hash)
           SELECT audit_ulid_uuid($1), level, idx, decode(hash, 'hex') FROM unnest($2::smallint[], $3::bigint[], $4::text[]) AS n(level, idx, hash)`,
          [chainId, nodes.map((n) => n.level), nodes.map((n) => n.index), nodes.map((n) => n.hash.toString('hex'))],
        );
      });
    }

    let chain: Chain;
    let older: string;
    let newer: string;

    beforeAll(async () => {
      await grow('rewritten', 10);
      const first = (await exported()).get('rewritten')!;
      older = (await get(`/v1/chain/${first.id}/checkpoint`).expect(200)).text;
      await grow('rewritten', 10, 11);
      chain = (await exported()).get('rewritten')!;
      newer = (await get(`/v1/chain/${chain.id}/checkpoint`).expect(200)).text;
      expect((await get(`/v1/chain/${chain.id}/verify`).expect(200)).body.data).toMatchObject({ valid: true });
      await rewrite(chain.id, 15);
    });

    it('is exposed by /verify: the tree agrees with the events, the checkpoint root does not', async () => {
      const result = (await get(`/v1/chain/${chain.id}/verify`).expect(200)).body.data;
      expect(result).toMatchObject({
        valid: false,
        checkedEvents: 20,
        firstInvalidPosition: 20,
        checkpointsChecked: 2,
      });
      expect(result.errors).toEqual([
        {
          position: 20,
          eventId: chain.events[19]!.id,
          message: expect.stringMatching(
            /checkpoint signed at size 20 has Merkle root .*rewritten after it was signed/,
          ),
        },
      ]);
    });

    it('is exposed by a consistency proof that fails against the old root, and the service refuses to sign', async () => {
      await grow('rewritten', 2, 21);
      const oldRoot = parseCheckpoint(newer.slice(0, newer.lastIndexOf('\n\n') + 1)).hash;
      const res = (await get(`/v1/chain/${chain.id}/consistency?from=20&to=22`).expect(200)).body.data;
      expect(res.fromRoot).not.toBe(oldRoot.toString('hex'));
      const toRoot = Buffer.from(res.toRoot, 'hex');
      expect(verifyConsistency(20, 22, Buffer.from(res.fromRoot, 'hex'), toRoot, hexes(res.proof))).toBe(true);
      expect(verifyConsistency(20, 22, oldRoot, toRoot, hexes(res.proof))).toBe(false);
      const refused = await get(`/v1/chain/${chain.id}/checkpoint`).expect(500);
      expect(refused.body.error.message).toMatch(/Refusing to sign/);
    });

    it('is exposed by the CLI: verify-consistency, verify-proof and verify-export', async () => {
      const consistency = (await get(`/v1/chain/${chain.id}/consistency?from=10&to=20`).expect(200)).text;
      const failed = await cli('verify-consistency', consistency, { '--old': older, '--new': newer });
      expect(failed.code).toBe(1);
      const inclusion = (await get(`/v1/events/${chain.events[15]!.id}/proof?size=20`).expect(200)).text;
      expect((await cli('verify-proof', inclusion, { '--checkpoint': newer })).code).toBe(1);
      // Events before the rewrite still prove against the old checkpoint.
      const untouched = (await get(`/v1/events/${chain.events[8]!.id}/proof?size=10`).expect(200)).text;
      expect((await cli('verify-proof', untouched, { '--checkpoint': older })).code).toBe(0);
      const exportRun = await cli('verify-export', await exportJsonText(t, KEYS.acme, chain.id), {
        '--checkpoint': newer,
      });
      expect(exportRun.code).toBe(1);
      expect(exportRun.out).toMatch(/TAMPERING FOUND[\s\S]*Merkle root of the exported events 1–20 is .* rewritten/);
    });
  });
});
