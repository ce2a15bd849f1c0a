import { GENESIS_HASH, verifyConsistency, verifyInclusion, eventLeafHash } from '@app/hashing';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../apps/cli/src/cli';
import { attemptSql } from './support/raw-sql';
import { independentRoot } from './support/rfc9162';
import { readChainEvents, rehash } from './support/chain-check';
import { ADMIN_KEYS, adminBootstrapKeys } from './support/admin-keys';
import { bearer, exportJsonText, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';

const DAY = 86_400;

/**
 * Retention and legal hold (docs/contract.md §14) on a real database with real hashes: the sweep deletes
 * exactly the prefix older than the retention, signs a checkpoint first, and every remaining event
 * stays provable (inclusion proofs against the independent RFC 9162 root of test/support/rfc9162.ts,
 * consistency proofs, event verification of the first retained event); holds stop it; nothing but
 * the sweep's path can delete.
 */
describe('Retention and legal hold', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ retentionSweepSeconds: 0, bootstrapKeys: adminBootstrapKeys() });
  });
  afterAll(async () => {
    await t.close();
  });

  /** Settings need `admin` (docs/contract.md §14): `put` sends an account's usual key's requests with its admin key. */
  const ADMIN_OF: Record<string, string> = { [KEYS.acme]: ADMIN_KEYS.acmeAdmin, [KEYS.globex]: ADMIN_KEYS.globexAdmin };
  const req = (key: string = KEYS.acme) => {
    const http = t.http();
    return {
      get: (path: string) => http.get(path).set(...bearer(key)),
      put: (path: string, body: unknown) =>
        http
          .put(path)
          .set(...bearer(ADMIN_OF[key] ?? key))
          .send(body as object),
      post: (path: string, body?: unknown) =>
        http
          .post(path)
          .set(...bearer(key))
          .send(body as object),
    };
  };

  interface Appended {
    id: string;
    hash: string;
    chain: { id: string; position: number };
  }

  async function append(chain: string, count: number, key: string = KEYS.acme): Promise<Appended[]> {
    const out: Appended[] = [];
    for (let i = 0; i < count; i += 1000) {
      const events = Array.from({ length: Math.min(1000, count - i) }, (_, k) => ({
        actor: 'alice',
        action: 'doc.update',
        resource: `doc:${i + k}`,
        context: { i: i + k },
        chain,
      }));
      const res = await req(key).post('/v1/events/batch', { events }).expect(201);
      out.push(...(res.body as { data: Appended[] }).data);
    }
    return out;
  }

  const accountOf = async (key: string = KEYS.acme): Promise<string> => {
    const [row] = await t.dataSource.query<{ id: string }[]>(
      `SELECT audit_uuid_ulid('acc', a.id) AS id FROM accounts a JOIN api_keys k ON k.account_id = a.id WHERE k.key_digest = encode(sha256($1::bytea), 'hex')`,
      [Buffer.from(key)],
    );
    return row!.id;
  };

  /** POST /v1/retention/sweep (an operator's: it sweeps every account) with the sweep's clock shifted. */
  const sweep = async (offsetSeconds: number, _account?: string) => {
    t.config.retentionClockOffsetSeconds = offsetSeconds;
    try {
      return (await req(ADMIN_KEYS.operator).post('/v1/retention/sweep').expect(200)).body.data as {
        chains: number;
        events: number;
      };
    } finally {
      t.config.retentionClockOffsetSeconds = 0;
    }
  };

  const status = async (chainId: string, key: string = KEYS.acme) =>
    (await req(key).get(`/v1/chain/${chainId}/status`).expect(200)).body.data as {
      firstPosition: number;
      lastPosition: number;
      eventCount: number;
      lastHash: string;
      retentionDays: number | null;
      effectiveRetentionDays: number | null;
      legalHold: boolean;
      effectiveLegalHold: boolean;
    };

  describe('settings', () => {
    it('chain status shows the settings; PUT changes them and answers the status; bad input is 400, foreign ids 404', async () => {
      const [first] = await append('settings', 1);
      const chainId = first!.chain.id;
      const account = await accountOf();
      expect(await status(chainId)).toMatchObject({
        firstPosition: 1,
        retentionDays: null,
        effectiveRetentionDays: null,
        legalHold: false,
        effectiveLegalHold: false,
      });

      const acc = await req().put(`/v1/accounts/${account}/retention`, { days: 30 }).expect(200);
      expect(acc.body.data).toMatchObject({ id: account, name: 'acme', retentionDays: 30, legalHold: false });
      expect(await status(chainId)).toMatchObject({ retentionDays: null, effectiveRetentionDays: 30 });

      const own = await req().put(`/v1/chain/${chainId}/retention`, { days: 7 }).expect(200);
      expect(own.body.data).toMatchObject({ id: chainId, retentionDays: 7, effectiveRetentionDays: 7 });

      await req().put(`/v1/accounts/${account}/legal-hold`, { hold: true, reason: 'litigation 42' }).expect(200);
      expect(await status(chainId)).toMatchObject({ legalHold: false, effectiveLegalHold: true });
      await req().put(`/v1/accounts/${account}/legal-hold`, { hold: false }).expect(200);
      await req().put(`/v1/chain/${chainId}/legal-hold`, { hold: true, reason: 'audit' }).expect(200);
      expect(await status(chainId)).toMatchObject({ legalHold: true, effectiveLegalHold: true });
      await req().put(`/v1/chain/${chainId}/legal-hold`, { hold: false }).expect(200);
      await req().put(`/v1/chain/${chainId}/retention`, { days: null }).expect(200);
      await req().put(`/v1/accounts/${account}/retention`, { days: null }).expect(200);
      expect(await status(chainId)).toMatchObject({ effectiveRetentionDays: null, effectiveLegalHold: false });

      for (const days of [0, 36_501, 1.5, '7', undefined]) {
        const res = await req().put(`/v1/chain/${chainId}/retention`, { days }).expect(400);
        expect(res.body.error.details.fields[0].field).toBe('days');
      }
      await req().put(`/v1/chain/${chainId}/retention`, { days: 7, extra: 1 }).expect(400);
      const noReason = await req().put(`/v1/chain/${chainId}/legal-hold`, { hold: true }).expect(400);
      expect(noReason.body.error.details.fields[0].field).toBe('reason');
      await req()
        .put(`/v1/chain/${chainId}/legal-hold`, { hold: true, reason: 'x'.repeat(513) })
        .expect(400);

      // Another account's chain or account: 404, like an unknown one; read-only keys: 403.
      await req(KEYS.globex).put(`/v1/chain/${chainId}/retention`, { days: 1 }).expect(404);
      await req(KEYS.globex).put(`/v1/accounts/${account}/retention`, { days: 1 }).expect(404);
      await req(KEYS.globex).put(`/v1/accounts/${account}/legal-hold`, { hold: false }).expect(404);
      await req().put(`/v1/chain/chn_01KAR2Y6T0F5M3Q8W9Z1B4C7D2/retention`, { days: 1 }).expect(404);
      // Settings need admin (or operator), the sweep operator (docs/contract.md §12, §14).
      for (const key of [KEYS.acmeReadOnly, KEYS.acmeIngestOnly, KEYS.acme]) {
        await t
          .http()
          .put(`/v1/chain/${chainId}/retention`)
          .set(...bearer(key))
          .send({ days: 1 })
          .expect(403);
        await req(key).post('/v1/retention/sweep').expect(403);
      }
      await req(ADMIN_KEYS.acmeAdmin).post('/v1/retention/sweep').expect(403);
      // An operator manages any account's settings; an admin only its own.
      const byOperator = await req(ADMIN_KEYS.operator)
        .put(`/v1/accounts/${account}/retention`, { days: 9 })
        .expect(200);
      expect(byOperator.body.data).toMatchObject({ id: account, retentionDays: 9 });
      await req(ADMIN_KEYS.operator).put(`/v1/accounts/${account}/retention`, { days: null }).expect(200);
      expect(await status(chainId)).toMatchObject({ retentionDays: null, legalHold: false });
    });
  });

  describe('a prune, and every remaining event provable', () => {
    /** Chains pruned whole at these sizes, then grown by GROW events. */
    const SIZES = [1, 2, 3, 7, 8, 9, 1000];
    const GROW = 6;
    const chains = new Map<number, { id: string; hashes: string[]; ids: string[] }>();
    let pruned: { chains: number; events: number };
    let signedBefore: Map<number, string>;
    let auditChain: string;

    beforeAll(async () => {
      for (const size of SIZES) {
        const events = await append(`pruned-${size}`, size);
        chains.set(size, { id: events[0]!.chain.id, hashes: events.map((e) => e.hash), ids: events.map((e) => e.id) });
      }
      // A checkpoint signed before, at a size inside the prefix of the 1000-event chain.
      signedBefore = new Map();
      for (const size of SIZES)
        signedBefore.set(
          size,
          (
            await req()
              .get(`/v1/chain/${chains.get(size)!.id}/checkpoint`)
              .expect(200)
          ).text,
        );
      await req()
        .put(`/v1/accounts/${await accountOf()}/retention`, { days: 1 })
        .expect(200);
      // The settings chain and any other acme chain have their own days = null and follow the account
      // too; its _audit chain is held, so that the prune's own entries (stamped now, old under the
      // shifted clock) stay to be read.
      auditChain = (
        await t.dataSource.query<
          { id: string }[]
        >(`SELECT audit_uuid_ulid('chn', c.id) AS id FROM chains c JOIN accounts a ON a.id = c.account_id
                      WHERE a.name = 'acme' AND c.name = '_audit'`)
      )[0]!.id;
      await req().put(`/v1/chain/${auditChain}/legal-hold`, { hold: true, reason: 'keep the record' }).expect(200);
      pruned = await sweep(2 * DAY);
      await req().put(`/v1/chain/${auditChain}/legal-hold`, { hold: false }).expect(200);
      await req()
        .put(`/v1/accounts/${await accountOf()}/retention`, { days: null })
        .expect(200);
      for (const size of SIZES) {
        const more = await append(`pruned-${size}`, GROW);
        chains.get(size)!.hashes.push(...more.map((e) => e.hash));
        chains.get(size)!.ids.push(...more.map((e) => e.id));
      }
    });

    it('deleted exactly the old prefixes, kept lastPosition/lastHash, and the chains continue', async () => {
      expect(pruned.events).toBeGreaterThanOrEqual(SIZES.reduce((a, b) => a + b, 0));
      for (const size of SIZES) {
        const chain = chains.get(size)!;
        const s = await status(chain.id);
        expect(s).toMatchObject({ firstPosition: size + 1, lastPosition: size + GROW, eventCount: GROW });
        expect(s.lastHash).toBe(chain.hashes[size + GROW - 1]);
        const rows = await readChainEvents(t.dataSource, chain.id);
        expect(rows.map((r) => r.position)).toEqual(Array.from({ length: GROW }, (_, i) => size + 1 + i));
        expect(rows[0]!.previousHash).toBe(chain.hashes[size - 1]);
        const [kept] = await t.dataSource.query<
          {
            pruned_hash: string;
          }[]
        >(`SELECT encode(pruned_hash, 'hex') AS pruned_hash FROM chains WHERE id = audit_ulid_uuid($1)`, [chain.id]);
        expect(kept!.pruned_hash).toBe(chain.hashes[size - 1]);
      }
    });

    it('appended one retention.pruned entry per prune, and one entry per settings change, to the account’s _audit chain', async () => {
      const entries = await t.dataSource.query<
        { actor: string; action: string; resource: string; context: Record<string, unknown> }[]
      >(`SELECT actor, action, resource, context FROM events WHERE chain_id = audit_ulid_uuid($1) ORDER BY position`, [
        auditChain,
      ]);
      for (const size of SIZES)
        expect(entries.filter((e) => e.action === 'retention.pruned' && e.resource === chains.get(size)!.id)).toEqual([
          {
            actor: 'service:retention',
            action: 'retention.pruned',
            resource: chains.get(size)!.id,
            context: {
              firstPrunedPosition: 1,
              lastPrunedPosition: size,
              reason: 'older than the retention of 1 day(s)',
            },
          },
        ]);
      const account = await accountOf();
      expect(entries).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ action: 'retention.changed', resource: account, context: { days: 1 } }),
          expect.objectContaining({
            action: 'legal_hold.changed',
            resource: auditChain,
            context: { hold: true, reason: 'keep the record' },
          }),
        ]),
      );
      expect(entries.every((e) => e.actor === 'service:retention' || e.actor.startsWith('key:'))).toBe(true);
    });

    it('signed a checkpoint covering the prefix before deleting it', async () => {
      for (const size of SIZES) {
        const [row] = await t.dataSource.query<{ size: number }[]>(
          `SELECT max(size)::int AS size FROM checkpoints WHERE chain_id = audit_ulid_uuid($1)`,
          [chains.get(size)!.id],
        );
        expect(row!.size).toBeGreaterThanOrEqual(size);
      }
    });

    it('pruned events answer 404 to get, verify and proof, and are absent from lists and exports', async () => {
      const chain = chains.get(9)!;
      for (const id of chain.ids.slice(0, 9)) {
        await req().get(`/v1/events/${id}`).expect(404);
        await req().get(`/v1/events/${id}/verify`).expect(404);
        await req().get(`/v1/events/${id}/proof`).expect(404);
      }
      const list = await req().get(`/v1/events?chain_id=${chain.id}&limit=200`).expect(200);
      expect((list.body.data as { id: string }[]).map((e) => e.id).sort()).toEqual(chain.ids.slice(9).sort());
      const exported = await req()
        .get(`/v1/events/export`)
        .query({
          format: 'json',
          after: '2000-01-01T00:00:00.000Z',
          before: new Date(Date.now() + 60_000).toISOString(),
        })
        .query({ chain_id: chain.id })
        .expect(200);
      const body = JSON.parse(exported.text) as { data: { id: string; chain: { position: number } }[] };
      expect(body.data.map((e) => e.chain.position)).toEqual([10, 11, 12, 13, 14, 15]);
    });

    it('the first retained event verifies against the kept hash', async () => {
      for (const size of SIZES) {
        const chain = chains.get(size)!;
        const res = await req().get(`/v1/events/${chain.ids[size]}/verify`).expect(200);
        expect(res.body.data).toMatchObject({ valid: true, chainIntact: true, errors: [] });
      }
    });

    it('inclusion proofs of retained events at every size ≥ the first retained position lead to the RFC 9162 root', async () => {
      for (const size of SIZES) {
        const chain = chains.get(size)!;
        for (let position = size + 1; position <= size + GROW; position++)
          for (let treeSize = position; treeSize <= size + GROW; treeSize++) {
            const res = await req()
              .get(`/v1/events/${chain.ids[position - 1]}/proof?size=${treeSize}`)
              .expect(200);
            const proof = res.body.data as { rootHash: string; proof: string[]; leafIndex: number };
            expect(proof.rootHash).toBe(independentRoot(chain.hashes.slice(0, treeSize)));
            expect(
              verifyInclusion(
                position - 1,
                treeSize,
                eventLeafHash(chain.hashes[position - 1]!),
                proof.proof.map((h) => Buffer.from(h, 'hex')),
                Buffer.from(proof.rootHash, 'hex'),
              ),
            ).toBe(true);
          }
      }
    });

    it('consistency proofs from or to a pruned size are 410 PRUNED; between retained sizes (and from 0) they verify', async () => {
      for (const size of SIZES) {
        const chain = chains.get(size)!;
        const last = size + GROW;
        for (const [from, to] of [
          [size, last],
          [1, last],
          [Math.max(1, size - 1), size],
        ] as const) {
          const res = await req().get(`/v1/chain/${chain.id}/consistency?from=${from}&to=${to}`).expect(410);
          expect(res.body.error).toMatchObject({ code: 'PRUNED', details: { firstPosition: size + 1 } });
        }
        await req().get(`/v1/chain/${chain.id}/consistency?from=0&to=${last}`).expect(200);
        for (let from = size + 1; from <= last; from++) {
          const res = await req().get(`/v1/chain/${chain.id}/consistency?from=${from}&to=${last}`).expect(200);
          const p = res.body.data as { fromRoot: string; toRoot: string; proof: string[] };
          expect(p.fromRoot).toBe(independentRoot(chain.hashes.slice(0, from)));
          expect(p.toRoot).toBe(independentRoot(chain.hashes));
          expect(
            verifyConsistency(
              from,
              last,
              Buffer.from(p.fromRoot, 'hex'),
              Buffer.from(p.toRoot, 'hex'),
              p.proof.map((h) => Buffer.from(h, 'hex')),
            ),
          ).toBe(true);
        }
      }
    });

    it('the checkpoint after a prune signs the grown head, consistent with the one signed before', async () => {
      for (const size of SIZES) {
        const chain = chains.get(size)!;
        const note = (await req().get(`/v1/chain/${chain.id}/checkpoint`).expect(200)).text;
        const [, treeSize, root] = note.split('\n');
        expect(Number(treeSize)).toBe(size + GROW);
        expect(Buffer.from(root!, 'base64').toString('hex')).toBe(independentRoot(chain.hashes));
        expect(signedBefore.get(size)).toContain(
          Buffer.from(independentRoot(chain.hashes.slice(0, size)), 'hex').toString('base64'),
        );
      }
    });

    it('whole-chain verification starts at the first retained position and checks the kept nodes and hash', async () => {
      for (const size of SIZES) {
        const chain = chains.get(size)!;
        const res = await req().get(`/v1/chain/${chain.id}/verify`).expect(200);
        expect(res.body.data).toMatchObject({
          valid: true,
          checkedEvents: GROW,
          lastPosition: size + GROW,
          lastHash: chain.hashes[size + GROW - 1],
          errors: [],
        });
        // The checkpoint signed before the prune (size `size`) and the one signed after (size + GROW).
        expect(res.body.data.checkpointsChecked).toBeGreaterThanOrEqual(2);
      }
      const chain = chains.get(7)!;
      const tamper = (sql: string, params: unknown[]) =>
        attemptSql(t.dataSource, async (m) => {
          await m.query('SET LOCAL session_replication_role = replica');
          await m.query(sql, params);
        });
      // A kept node rewritten (7 = 4 + 2 + 1: the node over positions 1–4): the checkpoints no longer match.
      const [node] = await t.dataSource.query<{ hash: Buffer }[]>(
        `SELECT hash FROM merkle_nodes WHERE chain_id = audit_ulid_uuid($1) AND level = 2 AND "index" = 0`,
        [chain.id],
      );
      expect(
        await tamper(
          `UPDATE merkle_nodes SET hash = sha256('x') WHERE chain_id = audit_ulid_uuid($1) AND level = 2 AND "index" = 0`,
          [chain.id],
        ),
      ).toBeNull();
      const forgedNode = (await req().get(`/v1/chain/${chain.id}/verify`).expect(200)).body.data;
      expect(forgedNode.valid).toBe(false);
      expect(forgedNode.errors[0].message).toMatch(/Merkle root/);
      await tamper(
        `UPDATE merkle_nodes SET hash = $2 WHERE chain_id = audit_ulid_uuid($1) AND level = 2 AND "index" = 0`,
        [chain.id, node!.hash],
      );
      // The kept hash rewritten: the first retained event's link is reported, by both verifications.
      expect(
        await tamper(`UPDATE chains SET pruned_hash = decode($2, 'hex') WHERE id = audit_ulid_uuid($1)`, [
          chain.id,
          'ab'.repeat(32),
        ]),
      ).toBeNull();
      const forgedLink = (await req().get(`/v1/chain/${chain.id}/verify`).expect(200)).body.data;
      expect(forgedLink).toMatchObject({ valid: false, firstInvalidPosition: 7 });
      const messages = (forgedLink.errors as { position: number; message: string }[]).map((e) => [
        e.position,
        e.message,
      ]);
      expect(messages).toEqual(
        expect.arrayContaining([
          [7, expect.stringMatching(/not the last leaf of the kept Merkle nodes/)],
          [8, expect.stringMatching(/previousHash .* does not match the hash of the event at position 7/)],
        ]),
      );
      const one = (await req().get(`/v1/events/${chain.ids[7]}/verify`).expect(200)).body.data;
      expect(one).toMatchObject({ valid: false, chainIntact: false });
      await tamper(`UPDATE chains SET pruned_hash = decode($2, 'hex') WHERE id = audit_ulid_uuid($1)`, [
        chain.id,
        chain.hashes[6],
      ]);
      expect((await req().get(`/v1/chain/${chain.id}/verify`).expect(200)).body.data.valid).toBe(true);
    });

    it('the offline CLI verifies an export of a pruned chain from its first retained position against a signed checkpoint', async () => {
      const work = mkdtempSync(join(tmpdir(), 'audit-retention-'));
      try {
        const vkey = (await t.http().get('/v1/checkpoint-key').expect(200)).text.trim();
        const cli = async (...args: string[]) => {
          let out = '';
          const code = await run(args, { out: (text) => (out += text), err: (text) => (out += text), env: {} });
          return { code, out };
        };
        for (const size of [1, 8, 9, 1000]) {
          const chain = chains.get(size)!;
          const file = join(work, `export-${size}.json`);
          const text = await exportJsonText(t, KEYS.acme, chain.id);
          writeFileSync(file, text);
          const header = (JSON.parse(text) as { export: { pruned: { lastPosition: number; lastHash: string }[] } })
            .export.pruned;
          expect(header).toEqual([expect.objectContaining({ lastPosition: size, lastHash: chain.hashes[size - 1] })]);
          const note = join(work, `checkpoint-${size}.txt`);
          writeFileSync(note, (await req().get(`/v1/chain/${chain.id}/checkpoint`).expect(200)).text);
          const verified = await cli('verify-export', file, '--checkpoint', note, '--key', vkey);
          expect(verified.out).toMatch(/RESULT: VERIFIED/);
          expect(verified.code).toBe(0);
          // Without a checkpoint, nothing is confirmed (only a signature confirms).
          expect((await cli('verify-export', file)).code).toBe(1);
          // The checkpoint signed before the prune (size = the pruned size) confirms the kept hash, not the events after it.
          const before = join(work, `before-${size}.txt`);
          writeFileSync(before, signedBefore.get(size)!);
          const partial = await cli('verify-export', file, '--checkpoint', before, '--key', vkey);
          expect(partial.code).toBe(1);
          expect(partial.out).toMatch(/NOT CONFIRMED/);
        }
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    });

    it('a second sweep prunes nothing more; the tree keeps O(log n) nodes below the first retained position', async () => {
      expect(await sweep(0)).toEqual({ chains: 0, events: 0 });
      const chain = chains.get(1000)!;
      const nodes = await t.dataSource.query<{ level: number; index: number }[]>(
        `SELECT level, "index"::int AS index FROM merkle_nodes WHERE chain_id = audit_ulid_uuid($1) AND ("index" + 1) << level <= 1000 ORDER BY level DESC`,
        [chain.id],
      );
      // 1000 = 512 + 256 + 128 + 64 + 32 + 8 (one node per set bit), and 999 = … + 4 + 2 + 1 (the
      // nodes that with the last pruned leaf give the one of 8).
      expect(nodes).toEqual([
        { level: 9, index: 0 },
        { level: 8, index: 2 },
        { level: 7, index: 6 },
        { level: 6, index: 14 },
        { level: 5, index: 30 },
        { level: 3, index: 124 },
        { level: 2, index: 248 },
        { level: 1, index: 498 },
        { level: 0, index: 998 },
      ]);
    });
  });

  describe('what is pruned, and what is not', () => {
    // First: its sweep's clock is shifted by less than HOLD_RELEASE_DELAY_HOURS, so no hold of globex may have been lifted yet.
    it('a chain whose old events are followed by recent ones is pruned only up to the first recent one', async () => {
      const account = await accountOf(KEYS.globex);
      const old = await append('mixed', 4, KEYS.globex);
      await new Promise((r) => setTimeout(r, 2500));
      const recent = await append('mixed', 3, KEYS.globex);
      await req(KEYS.globex).put(`/v1/accounts/${account}/retention`, { days: 1 }).expect(200);
      // now + (1 day − 1 s) − 1 day: events older than one second go.
      expect((await sweep(DAY - 1, KEYS.globex)).events).toBeGreaterThanOrEqual(4);
      const s = await status(old[0]!.chain.id, KEYS.globex);
      expect(s).toMatchObject({ firstPosition: 5, lastPosition: 7 });
      await req(KEYS.globex).get(`/v1/events/${recent[0]!.id}/verify`).expect(200);
      await req(KEYS.globex).put(`/v1/accounts/${account}/retention`, { days: null }).expect(200);
    });

    it('legal hold (chain or account) and "forever" stop the sweep; lifting the hold lets it prune', async () => {
      const account = await accountOf(KEYS.globex);
      const g = req(KEYS.globex);
      const [a] = await append('held', 3, KEYS.globex);
      const [b] = await append('free', 3, KEYS.globex);
      expect(await sweep(2 * DAY, KEYS.globex)).toEqual({ chains: 0, events: 0 }); // forever (the default)
      await g.put(`/v1/accounts/${account}/retention`, { days: 1 }).expect(200);
      await g.put(`/v1/accounts/${account}/legal-hold`, { hold: true, reason: 'regulator' }).expect(200);
      expect(await sweep(2 * DAY, KEYS.globex)).toEqual({ chains: 0, events: 0 });
      await g.put(`/v1/accounts/${account}/legal-hold`, { hold: false }).expect(200);
      await g.put(`/v1/chain/${a!.chain.id}/legal-hold`, { hold: true, reason: 'case 7' }).expect(200);
      await sweep(2 * DAY, KEYS.globex);
      expect((await status(a!.chain.id, KEYS.globex)).firstPosition).toBe(1);
      expect((await status(b!.chain.id, KEYS.globex)).firstPosition).toBe(4);
      // A chain with nothing retained: its checkpoint is the one signed before the prune, and it verifies.
      const note = (await g.get(`/v1/chain/${b!.chain.id}/checkpoint`).expect(200)).text;
      expect(note.split('\n')[1]).toBe('3');
      expect((await g.get(`/v1/chain/${b!.chain.id}/verify`).expect(200)).body.data).toMatchObject({
        valid: true,
        checkedEvents: 0,
        lastPosition: 3,
      });
      await g.put(`/v1/chain/${a!.chain.id}/legal-hold`, { hold: false }).expect(200);
      expect((await sweep(2 * DAY, KEYS.globex)).events).toBeGreaterThanOrEqual(3);
      expect((await status(a!.chain.id, KEYS.globex)).firstPosition).toBe(4);
      // Not yet older than the retention: nothing.
      await append('fresh', 2, KEYS.globex);
      expect(await sweep(0, KEYS.globex)).toEqual({ chains: 0, events: 0 });
      await g.put(`/v1/accounts/${account}/retention`, { days: null }).expect(200);
    });

    it('a prune racing appends to the same chain loses nothing and breaks no link', async () => {
      const account = await accountOf(KEYS.globex);
      const initial = await append('race', 5000, KEYS.globex);
      const chainId = initial[0]!.chain.id;
      await req(KEYS.globex).put(`/v1/accounts/${account}/retention`, { days: 1 }).expect(200);
      const appends = (async () => {
        const made: Appended[] = [];
        for (let i = 0; i < 40; i++) made.push(...(await append('race', 5, KEYS.globex)));
        return made;
      })();
      const [pruned, made] = await Promise.all([sweep(2 * DAY, KEYS.globex), appends]);
      await req(KEYS.globex).put(`/v1/accounts/${account}/retention`, { days: null }).expect(200);
      expect(pruned.events).toBeGreaterThanOrEqual(5000);
      const s = await status(chainId, KEYS.globex);
      expect(s.lastPosition).toBe(5200);
      const rows = await readChainEvents(t.dataSource, chainId);
      expect(rows.length).toBe(5200 - s.firstPosition + 1);
      const [kept] = await t.dataSource.query<
        {
          pruned_hash: string;
        }[]
      >(`SELECT encode(pruned_hash, 'hex') AS pruned_hash FROM chains WHERE id = audit_ulid_uuid($1)`, [chainId]);
      let previous = kept!.pruned_hash;
      rows.forEach((row, i) => {
        expect(row.position).toBe(s.firstPosition + i);
        expect(row.previousHash).toBe(previous);
        expect(rehash(row)).toBe(row.hash);
        previous = row.hash;
      });
      expect(made.length).toBe(200);
      for (const e of made.filter((m) => m.chain.position >= s.firstPosition).slice(0, 5))
        await req(KEYS.globex).get(`/v1/events/${e.id}/proof`).expect(200);
    });
  });

  describe('only the sweep deletes', () => {
    let chainId: string;
    beforeAll(async () => {
      const events = await append('guarded', 20, KEYS.globex);
      chainId = events[0]!.chain.id;
    });

    const refused = async (sql: string, params: unknown[] = []) => {
      const error = await attemptSql(t.dataSource, (m) => m.query(sql, params));
      expect(error).not.toBeNull();
      return error!;
    };

    it('the service role cannot delete any event directly, nor truncate or update', async () => {
      await refused(`DELETE FROM events WHERE chain_id = audit_ulid_uuid($1) AND position = 10`, [chainId]);
      await refused(`DELETE FROM events WHERE chain_id = audit_ulid_uuid($1) AND position = 1`, [chainId]);
      await refused(`TRUNCATE events`);
      await refused(`UPDATE events SET actor = 'mallory' WHERE chain_id = audit_ulid_uuid($1)`, [chainId]);
      await refused(`DELETE FROM merkle_nodes WHERE chain_id = audit_ulid_uuid($1)`, [chainId]);
      await refused(`DELETE FROM checkpoints`);
    });

    it('the first retained position moves only under the policy: not on hold, not forever, only past old events', async () => {
      const [e] = await t.dataSource.query<{ hash: string; timestamp: Date }[]>(
        `SELECT encode(hash, 'hex') AS hash, "timestamp" FROM events WHERE chain_id = audit_ulid_uuid($1) AND position = 10`,
        [chainId],
      );
      const move = `UPDATE chains SET first_position = 11, pruned_hash = decode($2, 'hex'), pruned_timestamp = $3 WHERE id = audit_ulid_uuid($1)`;
      // Forever (no retention): refused.
      expect((await refused(move, [chainId, e!.hash, e!.timestamp])).message).toMatch(/kept forever/);
      await t.dataSource.query(`UPDATE chains SET retention_days = 1 WHERE id = audit_ulid_uuid($1)`, [chainId]);
      // Recent: refused, whatever the service's clock says, unless the clock offset says so.
      expect((await refused(move, [chainId, e!.hash, e!.timestamp])).message).toMatch(/not older than the retention/);
      // On hold: refused.
      await t.dataSource.query(
        `UPDATE chains SET legal_hold = true, legal_hold_reason = 'x', legal_hold_by = 'admin' WHERE id = audit_ulid_uuid($1)`,
        [chainId],
      );
      const held = await attemptSql(t.dataSource, async (m) => {
        await m.query(`SELECT set_config('audit.retention_clock_offset_seconds', '172800', true)`);
        await m.query(move, [chainId, e!.hash, e!.timestamp]);
      });
      expect(held?.message).toMatch(/legal hold/);
      // The function prunes nothing of a held chain, and takes no position: it cannot reach a middle event.
      const [none] = await t.dataSource.query<{ n: number }[]>(
        `SELECT audit_prune_chain(audit_ulid_uuid($1)::text, 20, 1000, 172800)::int AS n`,
        [chainId],
      );
      expect(none!.n).toBe(0);
      await t.dataSource.query(
        `UPDATE chains SET legal_hold = false, legal_hold_reason = null, legal_hold_by = null WHERE id = audit_ulid_uuid($1)`,
        [chainId],
      );
      // Recent events through the function: nothing.
      const [recent] = await t.dataSource.query<
        {
          n: number;
        }[]
      >(`SELECT audit_prune_chain(audit_ulid_uuid($1)::text, 20, 1000, 0)::int AS n`, [chainId]);
      expect(recent!.n).toBe(0);
      // A wrong kept hash: refused.
      const forged = await attemptSql(t.dataSource, async (m) => {
        await m.query(`SELECT set_config('audit.retention_clock_offset_seconds', '172800', true)`);
        await m.query(move, [chainId, GENESIS_HASH, e!.timestamp]);
      });
      expect(forged?.message).toMatch(/kept hash/);
      // Past the first retained position: events there stay undeletable.
      await refused(`DELETE FROM events WHERE chain_id = audit_ulid_uuid($1) AND position = 15`, [chainId]);
      // Never past a signed checkpoint: none was signed yet, so nothing goes.
      const [unsigned] = await t.dataSource.query<{ n: number }[]>(
        `SELECT audit_prune_chain(audit_ulid_uuid($1)::text, 10, 1000, 172800)::int AS n`,
        [chainId],
      );
      expect(unsigned!.n).toBe(0);
      await req(KEYS.globex).get(`/v1/chain/${chainId}/checkpoint`).expect(200);
      // Old enough (by the offset) and bounded to position 10: exactly positions 1–10 go.
      const [pruned] = await t.dataSource.query<{ n: number }[]>(
        `SELECT audit_prune_chain(audit_ulid_uuid($1)::text, 10, 1000, 172800)::int AS n`,
        [chainId],
      );
      expect(pruned!.n).toBe(10);
      expect((await status(chainId, KEYS.globex)).firstPosition).toBe(11);
      await refused(`DELETE FROM events WHERE chain_id = audit_ulid_uuid($1) AND position = 11`, [chainId]);
      await refused(`UPDATE chains SET first_position = 5 WHERE id = audit_ulid_uuid($1)`, [chainId]);
    });

    // PGlite has one superuser session and no roles (docs/verification.md §7).
    (usingPostgres() ? it : it.skip)(
      'the least-privilege service role of docs/verification.md can neither delete nor move the first position, nor shift the sweep’s clock',
      async () => {
        const role = `retention_svc_${Date.now()}`;
        await t.dataSource.query(`CREATE ROLE ${role} NOLOGIN`);
        try {
          await t.dataSource.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
          await t.dataSource.query(
            `GRANT SELECT, INSERT ON events, checkpoints, merkle_nodes, chains, accounts TO ${role}`,
          );
          await t.dataSource.query(
            `GRANT UPDATE (last_position, last_hash, last_timestamp, retention_days, legal_hold, legal_hold_reason) ON chains TO ${role}`,
          );
          const as = (sql: string, params: unknown[] = []) =>
            attemptSql(t.dataSource, async (m) => {
              await m.query(`SET LOCAL SESSION AUTHORIZATION ${role}`);
              await m.query(sql, params);
            });
          expect((await as(`DELETE FROM events WHERE chain_id = audit_ulid_uuid($1)`, [chainId]))?.message).toMatch(
            /permission denied/,
          );
          expect(
            (await as(`UPDATE chains SET first_position = 15 WHERE id = audit_ulid_uuid($1)`, [chainId]))?.message,
          ).toMatch(/permission denied/);
          expect(
            (await as(`SELECT audit_prune_chain(audit_ulid_uuid($1)::text, 20, 1000, 172800)`, [chainId]))?.message,
          ).toMatch(/only the owner's role may shift the clock/);
          // Without the offset, it runs as the owner and prunes what the policy allows: nothing recent.
          expect(await as(`SELECT audit_prune_chain(audit_ulid_uuid($1)::text, 20, 1000, 0)`, [chainId])).toBeNull();
          expect((await status(chainId, KEYS.globex)).firstPosition).toBe(11);
        } finally {
          await t.dataSource.query(`DROP OWNED BY ${role}`);
          await t.dataSource.query(`DROP ROLE ${role}`);
        }
      },
    );
  });
});
