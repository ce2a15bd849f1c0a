import { createHash, createPublicKey, generateKeyPairSync, KeyObject, sign, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EntityManager } from 'typeorm';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { GENESIS_HASH, parseVerifierKey } from '@app/hashing';
import { run } from '../apps/cli/src/cli';
import { readExportDocument } from '../apps/cli/src/verify-export/export-document';
import { verifyExport } from '../apps/cli/src/verify-export/verify-export';
import { readChainEvents, rehash } from './support/chain-check';
import { independentRoot } from './support/rfc9162';
import { bearer, exportJsonText, KEYS, startTestApp, TestApp, usingPostgres } from './support/test-app';

/*
 * An independent reading of C2SP signed-note and tlog-checkpoint, written from the spec text and
 * sharing no code with libs/hashing/src/signed-note.ts:
 *   vkey      = name "+" hex(keyid) "+" base64(0x01 || 32-byte Ed25519 public key)
 *   keyid     = SHA-256(name || 0x0A || 0x01 || public key)[:4]
 *   note      = text (ending "\n") "\n" { "— " name " " base64(keyid || signature) "\n" }
 *   The text is separated from the signatures by the last blank line; unknown keys are ignored; a
 *   known key whose signature fails rejects the note; at least one known signature must verify.
 *   checkpoint text = origin "\n" decimal size "\n" base64(hash) "\n"
 * Our hash is the RFC 9162 Merkle root of the chain's first `size` events (docs/contract.md §10), computed
 * here by test/support/rfc9162.ts from the events' hashes.
 */
interface IndependentKey {
  name: string;
  id: Buffer;
  key: KeyObject;
}

function readVkey(vkey: string): IndependentKey {
  const first = vkey.indexOf('+');
  const name = vkey.slice(0, first);
  const idHex = vkey.slice(first + 1, first + 9);
  expect(vkey[first + 9]).toBe('+');
  const raw = Buffer.from(vkey.slice(first + 10), 'base64');
  expect(raw.length).toBe(33);
  expect(raw[0]).toBe(1);
  const pub = raw.subarray(1);
  const id = createHash('sha256')
    .update(Buffer.concat([Buffer.from(`${name}\n`, 'utf8'), Buffer.from([1]), pub]))
    .digest()
    .subarray(0, 4);
  expect(id.toString('hex')).toBe(idHex);
  return {
    name,
    id,
    key: createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: pub.toString('base64url') }, format: 'jwk' }),
  };
}

type Opened = { ok: true; origin: string; size: number; hash: Buffer } | { ok: false; why: string };

function openCheckpoint(note: string, known: IndependentKey): Opened {
  if (!note.endsWith('\n')) return { ok: false, why: 'no final newline' };
  const split = note.lastIndexOf('\n\n');
  if (split < 0) return { ok: false, why: 'no blank line' };
  const text = note.slice(0, split + 1);
  let verified = false;
  for (const line of note.slice(split + 2, -1).split('\n')) {
    if (!line.startsWith('\u2014 ')) return { ok: false, why: 'bad signature line' };
    const [name, b64, ...more] = line.slice(2).split(' ');
    if (!name || !b64 || more.length > 0) return { ok: false, why: 'bad signature line' };
    const blob = Buffer.from(b64, 'base64');
    if (name !== known.name || !blob.subarray(0, 4).equals(known.id)) continue;
    if (!verify(null, Buffer.from(text, 'utf8'), known.key, blob.subarray(4)))
      return { ok: false, why: 'signature does not verify' };
    verified = true;
  }
  if (!verified) return { ok: false, why: 'no signature from the known key' };
  const [origin = '', size = '', hash = '', ...rest] = text.split('\n');
  expect(rest).toEqual(['']);
  expect(size).toMatch(/^(0|[1-9]\d*)$/);
  return { ok: true, origin, size: Number(size), hash: Buffer.from(hash, 'base64') };
}

/** A signature line made with node:crypto alone, for keys the service does not know. */
function foreignSignatureLine(text: string, name: string, key: KeyObject): string {
  const pub = Buffer.from(createPublicKey(key).export({ format: 'jwk' }).x as string, 'base64url');
  const id = createHash('sha256')
    .update(Buffer.concat([Buffer.from(`${name}\n`), Buffer.from([1]), pub]))
    .digest()
    .subarray(0, 4);
  return `\u2014 ${name} ${Buffer.concat([id, sign(null, Buffer.from(text, 'utf8'), key)]).toString('base64')}\n`;
}

const hexToB64 = (hex: string): string => Buffer.from(hex, 'hex').toString('base64');

describe('signed checkpoints and whole-chain verification', () => {
  let t: TestApp;
  let vkey: string;
  let work: string;

  beforeAll(async () => {
    // Windows of 5 positions: every chain below spans several, so each attack meets window edges.
    t = await startTestApp({ verifyPageSize: 5 });
    work = mkdtempSync(join(tmpdir(), 'audit-ckpt-'));
    vkey = (await t.http().get('/v1/checkpoint-key').expect(200)).text.trim();
  });
  afterAll(async () => {
    await t.close();
    rmSync(work, { recursive: true, force: true });
  });

  const post = (chain: string, i: number, key: string = KEYS.acme) =>
    t
      .http()
      .post('/v1/events')
      .set(...bearer(key))
      .send({ actor: `user_${i}`, action: 'doc.update', resource: `doc:${i}`, context: { i, note: 'café 😀' }, chain });
  const checkpoint = (chainId: string, key: string = KEYS.acme) =>
    t
      .http()
      .get(`/v1/chain/${chainId}/checkpoint`)
      .set(...bearer(key));
  const verifyChain = (chainId: string) =>
    t
      .http()
      .get(`/v1/chain/${chainId}/verify`)
      .set(...bearer(KEYS.acme));

  async function chainOf(name: string, count: number): Promise<{ id: string; events: { id: string; hash: string }[] }> {
    const events: { id: string; hash: string; chain: { id: string } }[] = [];
    for (let i = 1; i <= count; i++) events.push((await post(name, i).expect(201)).body.data);
    return { id: events[0]!.chain.id, events };
  }

  /** What a database administrator can do: triggers off for one transaction. */
  async function tamper(work: (m: EntityManager) => Promise<void>): Promise<void> {
    await t.dataSource.transaction(async (m) => {
      await m.query('SET LOCAL session_replication_role = replica');
      await work(m);
    });
  }

  async function exportOf(chainId: string): Promise<unknown> {
    return JSON.parse(await exportJsonText(t, KEYS.acme, chainId));
  }

  /** The offline verifier, through the CLI entry point, on files: its exit code and report. */
  async function offline(
    exported: unknown,
    notes: string[],
    keys: string[] = [vkey],
    flags: string[] = [],
  ): Promise<{ code: number; out: string; err: string }> {
    const dir = mkdtempSync(join(work, 'run-'));
    writeFileSync(join(dir, 'export.json'), JSON.stringify(exported));
    const args = ['verify-export', join(dir, 'export.json'), ...flags];
    notes.forEach((note, i) => {
      writeFileSync(join(dir, `checkpoint-${i}.txt`), note);
      args.push('--checkpoint', join(dir, `checkpoint-${i}.txt`));
    });
    for (const key of keys) args.push('--key', key);
    let out = '';
    let err = '';
    const code = await run(args, { out: (s) => (out += s), err: (s) => (err += s), env: {} });
    return { code, out, err };
  }

  describe('GET /v1/checkpoint-key', () => {
    it('is public plain text: a verifier key whose key id matches its name and public key', async () => {
      const res = await t.http().get('/v1/checkpoint-key').expect(200);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.text).toMatch(/^audit-trail\+[0-9a-f]{8}\+[A-Za-z0-9+/]{44}\n$/);
      expect(readVkey(res.text.trim()).name).toBe('audit-trail');
    });

    it('rejects unknown query parameters', async () => {
      const res = await t.http().get('/v1/checkpoint-key?x=1').expect(400);
      expect(res.body.error.code).toBe('VALIDATION_ERROR');
    });
  });

  describe('GET /v1/chain/:chainId/checkpoint', () => {
    it('returns a signed tlog checkpoint of the chain’s Merkle root, verified independently', async () => {
      const chain = await chainOf('ckpt-basic', 3);
      const res = await checkpoint(chain.id).expect(200);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      const opened = openCheckpoint(res.text, readVkey(vkey));
      const root = independentRoot(chain.events.map((e) => e.hash));
      expect(opened).toEqual({
        ok: true,
        origin: `audit-trail/${chain.id}`,
        size: 3,
        hash: Buffer.from(root, 'hex'),
      });
      expect(res.text).toBe(`audit-trail/${chain.id}\n3\n${hexToB64(root)}\n\n${res.text.split('\n\n')[1]}`);
      const status = (
        await t
          .http()
          .get(`/v1/chain/${chain.id}/status`)
          .set(...bearer(KEYS.acme))
          .expect(200)
      ).body.data;
      expect(status).toMatchObject({ lastPosition: 3, lastHash: chain.events[2]!.hash });
    });

    it('returns the same note while the chain does not grow, and signs a new one when it does', async () => {
      const chain = await chainOf('ckpt-grow', 2);
      const first = (await checkpoint(chain.id).expect(200)).text;
      expect((await checkpoint(chain.id).expect(200)).text).toBe(first);
      const third = (await post('ckpt-grow', 3).expect(201)).body.data;
      const second = (await checkpoint(chain.id).expect(200)).text;
      const hashes = [...chain.events.map((e) => e.hash), third.hash as string];
      expect(openCheckpoint(second, readVkey(vkey))).toMatchObject({
        ok: true,
        size: 3,
        hash: Buffer.from(independentRoot(hashes), 'hex'),
      });
      const stored = await t.dataSource.query<{ size: number; hash: string; note: string }[]>(
        `SELECT size::int AS size, encode(hash, 'hex') AS hash, note FROM checkpoints WHERE chain_id = audit_ulid_uuid($1) ORDER BY size`,
        [chain.id],
      );
      expect(stored).toEqual([
        { size: 2, hash: independentRoot(hashes.slice(0, 2)), note: first },
        { size: 3, hash: independentRoot(hashes), note: second },
      ]);
    });

    it('reads every Merkle node it needs (root, head leaf, consistency proof) in one query', async () => {
      const chain = await chainOf('ckpt-one-read', 3);
      await checkpoint(chain.id).expect(200);
      for (const i of [4, 5, 6]) await post('ckpt-one-read', i).expect(201);
      const queries = jest.spyOn(PostgresQueryRunner.prototype, 'query');
      try {
        const note = (await checkpoint(chain.id).expect(200)).text;
        expect(note.split('\n')[1]).toBe('6');
        expect(queries.mock.calls.filter(([sql]) => /\bmerkle_nodes\b/.test(String(sql)))).toHaveLength(1);
      } finally {
        queries.mockRestore();
      }
    });

    it('answers 404 for another account, an unknown and a malformed chain id; 401 without a key; 400 for a query parameter', async () => {
      const chain = await chainOf('ckpt-private', 1);
      for (const path of [`/v1/chain/${chain.id}/checkpoint`, `/v1/chain/${chain.id}/verify`]) {
        expect(
          (
            await t
              .http()
              .get(path)
              .set(...bearer(KEYS.globex))
              .expect(404)
          ).body.error.code,
        ).toBe('NOT_FOUND');
        expect((await t.http().get(path).expect(401)).body.error.code).toBe('UNAUTHORIZED');
        expect(
          (
            await t
              .http()
              .get(`${path}?limit=1`)
              .set(...bearer(KEYS.acme))
              .expect(400)
          ).body.error.code,
        ).toBe('VALIDATION_ERROR');
      }
      for (const id of ['chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X', 'not-a-chain', 'chn_%27%3B--']) {
        const res = await checkpoint(id).expect(404);
        expect(res.headers['content-type']).toMatch(/^application\/json/);
        expect(res.body.error.code).toBe('NOT_FOUND');
        await verifyChain(id).expect(404);
      }
      expect(
        await t.dataSource.query(`SELECT count(*)::int AS n FROM checkpoints WHERE chain_id = audit_ulid_uuid($1)`, [
          chain.id,
        ]),
      ).toEqual([{ n: 0 }]);
    });

    it('needs the read scope', async () => {
      const chain = await chainOf('ckpt-scope', 1);
      expect((await checkpoint(chain.id, KEYS.acmeIngestOnly).expect(403)).body.error.code).toBe('FORBIDDEN');
      await checkpoint(chain.id, KEYS.acmeReadOnly).expect(200);
    });
  });

  describe('an independent verifier', () => {
    let note: string;
    let chainId: string;
    beforeAll(async () => {
      const chain = await chainOf('ckpt-independent', 2);
      chainId = chain.id;
      note = (await checkpoint(chain.id).expect(200)).text;
    });
    const text = () => note.slice(0, note.lastIndexOf('\n\n') + 1);
    const ourSignature = () => note.slice(note.lastIndexOf('\n\n') + 2);

    it('accepts the note', () => {
      expect(openCheckpoint(note, readVkey(vkey)).ok).toBe(true);
    });

    it('rejects every flipped byte of the text', () => {
      const bytes = Buffer.from(note, 'utf8');
      for (let i = 0; i < Buffer.byteLength(text()); i++) {
        if (bytes[i] === 0x0a) continue;
        const flipped = Buffer.from(bytes);
        flipped[i] = flipped[i]! ^ 0x01;
        expect(openCheckpoint(flipped.toString('latin1'), readVkey(vkey)).ok).toBe(false);
      }
    });

    it('rejects a flipped bit of the signature', () => {
      const [, name, b64] = /^\u2014 (\S+) (\S+)\n$/u.exec(ourSignature())!;
      const blob = Buffer.from(b64!, 'base64');
      blob[10] = blob[10]! ^ 0x80;
      const forged = `${text()}\n\u2014 ${name} ${blob.toString('base64')}\n`;
      expect(openCheckpoint(forged, readVkey(vkey))).toEqual({ ok: false, why: 'signature does not verify' });
    });

    it('rejects the note under a wrong key of the same name', () => {
      const other = generateKeyPairSync('ed25519').publicKey;
      const raw = Buffer.from(other.export({ format: 'jwk' }).x as string, 'base64url');
      const id = createHash('sha256')
        .update(Buffer.concat([Buffer.from('audit-trail\n'), Buffer.from([1]), raw]))
        .digest()
        .subarray(0, 4);
      const wrong = `audit-trail+${id.toString('hex')}+${Buffer.concat([Buffer.from([1]), raw]).toString('base64')}`;
      expect(openCheckpoint(note, readVkey(wrong))).toEqual({ ok: false, why: 'no signature from the known key' });
    });

    it('rejects a note signed only by an unknown key, and ignores an unknown signature beside ours', () => {
      const stranger = generateKeyPairSync('ed25519').privateKey;
      const foreign = foreignSignatureLine(text(), 'audit-trail', stranger);
      expect(openCheckpoint(`${text()}\n${foreign}`, readVkey(vkey))).toEqual({
        ok: false,
        why: 'no signature from the known key',
      });
      expect(openCheckpoint(`${text()}\n${ourSignature()}${foreign}`, readVkey(vkey)).ok).toBe(true);
    });

    it('agrees with the offline verifier on the same notes', async () => {
      const exported = await exportOf(chainId);
      expect((await offline(exported, [note])).code).toBe(0);
      const stranger = generateKeyPairSync('ed25519').privateKey;
      const foreignOnly = `${text()}\n${foreignSignatureLine(text(), 'audit-trail', stranger)}`;
      const unknown = await offline(exported, [foreignOnly]);
      expect(unknown.code).toBe(1);
      expect(unknown.out).toMatch(/not signed by the given key/);
      const flipped = `${text().replace('\n2\n', '\n3\n')}\n${ourSignature()}`;
      const altered = await offline(exported, [flipped]);
      expect(altered.code).toBe(1);
      expect(altered.out).toMatch(/TAMPERING FOUND[\s\S]*does not verify/);
      const malformed = await offline(exported, ['not a note\n']);
      expect(malformed.code).toBe(2);
    });
  });

  describe('tampering, caught by GET /v1/chain/:chainId/verify and by the offline verifier', () => {
    const N = 12;

    async function protectedChain(
      name: string,
    ): Promise<{ id: string; events: { id: string; hash: string }[]; note: string }> {
      const chain = await chainOf(name, N);
      const note = (await checkpoint(chain.id).expect(200)).text;
      return { ...chain, note };
    }

    async function rehashFrom(m: EntityManager, chainId: string, from: number): Promise<string> {
      const rows = await readChainEvents(m, chainId);
      let previous = GENESIS_HASH;
      for (const r of rows) {
        if (r.position >= from) {
          const hash = rehash(r, previous);
          await m.query(
            `UPDATE events SET previous_hash = decode($1, 'hex'), hash = decode($2, 'hex') WHERE id = audit_ulid_uuid($3)`,
            [previous, hash, r.id],
          );
          previous = hash;
        } else {
          previous = r.hash;
        }
      }
      const last = rows[rows.length - 1]!;
      await m.query(
        `UPDATE chains SET last_position = $1, last_hash = decode($2, 'hex'), last_timestamp = $3 WHERE id = audit_ulid_uuid($4)`,
        [last.position, previous, last.timestamp, chainId],
      );
      return previous;
    }

    it('passes an honest chain, online and offline', async () => {
      const chain = await protectedChain('attack-none');
      const result = (await verifyChain(chain.id).expect(200)).body;
      expect(Object.keys(result)).toEqual(['data']);
      expect(result.data).toEqual({
        valid: true,
        chainId: chain.id,
        checkedEvents: N,
        lastPosition: N,
        lastHash: chain.events[N - 1]!.hash,
        firstInvalidPosition: null,
        checkpointsChecked: 1,
        errors: [],
        errorCount: 0,
        errorsTruncated: false,
        verifiedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
      const offlineRun = await offline(await exportOf(chain.id), [chain.note]);
      expect(offlineRun.out).toMatch(/CONFIRMED[\s\S]*RESULT: VERIFIED/);
      expect(offlineRun.code).toBe(0);
    });

    it('an edited event', async () => {
      const chain = await protectedChain('attack-edit');
      await tamper((m) =>
        m.query(`UPDATE events SET actor = 'mallory' WHERE id = audit_ulid_uuid($1)`, [chain.events[4]!.id]),
      );
      const result = (await verifyChain(chain.id).expect(200)).body.data;
      expect(result).toMatchObject({ valid: false, checkedEvents: N, firstInvalidPosition: 5 });
      expect(result.errors).toEqual([
        {
          position: 5,
          eventId: chain.events[4]!.id,
          message: expect.stringMatching(/does not match the hash recomputed.*altered/),
        },
      ]);
      const offlineRun = await offline(await exportOf(chain.id), [chain.note]);
      expect(offlineRun.code).toBe(1);
      expect(offlineRun.out).toMatch(
        new RegExp(`TAMPERING FOUND[\\s\\S]*position 5 ${chain.events[4]!.id}: stored hash`),
      );
    });

    it('an edited event with its hash and every later hash recomputed', async () => {
      const chain = await protectedChain('attack-rehash');
      await tamper(async (m) => {
        await m.query(`UPDATE events SET actor = 'mallory' WHERE id = audit_ulid_uuid($1)`, [chain.events[4]!.id]);
        await rehashFrom(m, chain.id, 5);
      });
      const result = (await verifyChain(chain.id).expect(200)).body.data;
      // The stored tree still holds the old history: it disagrees with the events from position 5 on.
      expect(result).toMatchObject({ valid: false, checkedEvents: N, firstInvalidPosition: 5, checkpointsChecked: 1 });
      expect(result.errors).toEqual([
        {
          position: N,
          eventId: chain.events[N - 1]!.id,
          message: expect.stringMatching(/checkpoint signed at size 12 has Merkle root .*rewritten/),
        },
        // Levels 0 and 1 are not stored: the first stored node over position 5 is (2, 1), over 5–8.
        { position: 5, eventId: null, message: expect.stringMatching(/stored Merkle tree disagrees .*node \(2, 1\)/) },
      ]);
      const offlineRun = await offline(await exportOf(chain.id), [chain.note]);
      expect(offlineRun.code).toBe(1);
      expect(offlineRun.out).toMatch(/TAMPERING FOUND[\s\S]*position 12: checkpoint .*rewritten after the checkpoint/);
      // Without the checkpoint, the rewritten chain is self-consistent: that is what checkpoints are for.
      // Only a signature confirms: alone, it is NOT CONFIRMED; --internal-only calls it consistent, unsigned.
      const bare = await offline(await exportOf(chain.id), []);
      expect(bare.code).toBe(1);
      expect(bare.out).toMatch(/positions 1–12 NOT CONFIRMED: no checkpoint was given[\s\S]*RESULT: NOT CONFIRMED/);
      const internal = await offline(await exportOf(chain.id), [], [], ['--internal-only']);
      expect(internal.code).toBe(0);
      expect(internal.out).toMatch(/RESULT: CONSISTENT: .*No signature was checked/);
      // And the service refuses to sign the rewritten head.
      const refused = await checkpoint(chain.id).expect(500);
      expect(refused.body.error).toMatchObject({
        code: 'INTERNAL_ERROR',
        message: expect.stringMatching(/Refusing to sign/),
      });
      expect(refused.body.error.details.requestId).toBe(refused.headers['x-request-id']);
    });

    it.each([
      ['the head event is rewritten (an even size)', 0, N],
      ['the event before the head is rewritten (an odd size)', 1, N],
    ])('refuses to sign a head when %s and the stored tree is not', async (_label, appended, from) => {
      const chain = await protectedChain(`attack-near-head-${appended}`);
      for (let i = 0; i < appended; i++) await post(`attack-near-head-${appended}`, N + 1 + i).expect(201);
      await tamper(async (m) => {
        await m.query(`UPDATE events SET actor = 'mallory' WHERE chain_id = audit_ulid_uuid($1) AND position = $2`, [
          chain.id,
          from,
        ]);
        await rehashFrom(m, chain.id, from);
      });
      // Levels 0 and 1 are derived from the events: only the lowest stored node at the head tells.
      const refused = await checkpoint(chain.id).expect(500);
      expect(refused.body.error.message).toMatch(
        new RegExp(
          `^Refusing to sign chain ${chain.id} at size ${N + appended}: the stored Merkle tree disagrees with the events at the chain head`,
        ),
      );
    });

    it('a timestamp moved back, with its hash and every later hash recomputed: both /verify and the CLI name it', async () => {
      const chain = await protectedChain('attack-time');
      const back = '2020-01-01T00:00:00.000Z';
      await tamper(async (m) => {
        await m.query(`UPDATE events SET "timestamp" = $1 WHERE id = audit_ulid_uuid($2)`, [back, chain.events[5]!.id]);
        await rehashFrom(m, chain.id, 6);
      });
      const earlier = new RegExp(`^timestamp ${back} is earlier than .*the timestamp of the event at position 5`);
      const result = (await verifyChain(chain.id).expect(200)).body.data;
      // The stored tree's node over positions 5–6 no longer matches: reported from position 5.
      expect(result).toMatchObject({ valid: false, checkedEvents: N, firstInvalidPosition: 5 });
      expect(result.errors).toContainEqual({
        position: 6,
        eventId: chain.events[5]!.id,
        message: expect.stringMatching(earlier),
      });
      const one = (
        await t
          .http()
          .get(`/v1/events/${chain.events[5]!.id}/verify`)
          .set(...bearer(KEYS.acme))
          .expect(200)
      ).body.data;
      expect(one).toMatchObject({ valid: false, chainIntact: false, errors: [expect.stringMatching(earlier)] });
      // The message is the same everywhere: one core judges the event.
      expect(result.errors.find((e: { position: number }) => e.position === 6).message).toBe(one.errors[0]);
      // Offline, even without a checkpoint: the export itself says time went backwards.
      const offlineRun = await offline(await exportOf(chain.id), []);
      expect(offlineRun.code).toBe(1);
      expect(offlineRun.out).toContain(`position 6 ${chain.events[5]!.id}: ${one.errors[0]}`);
    });

    it('deleted newest events, with the head moved back', async () => {
      const chain = await protectedChain('attack-truncate');
      await tamper(async (m) => {
        await m.query(`DELETE FROM events WHERE chain_id = audit_ulid_uuid($1) AND position > 9`, [chain.id]);
        await m.query(
          `UPDATE chains SET last_position = 9, last_hash = decode($1, 'hex') WHERE id = audit_ulid_uuid($2)`,
          [chain.events[8]!.hash, chain.id],
        );
      });
      const result = (await verifyChain(chain.id).expect(200)).body.data;
      expect(result).toMatchObject({
        valid: false,
        checkedEvents: 9,
        lastPosition: 9,
        firstInvalidPosition: 10,
        checkpointsChecked: 1,
      });
      expect(result.errors).toEqual([
        {
          position: N,
          eventId: null,
          message: expect.stringMatching(/signed for more events than the chain now has \(9\).*removed/),
        },
        {
          // Node (2, 2) of positions 9–12 is still stored.
          position: 10,
          eventId: null,
          message: expect.stringMatching(
            /1 Merkle tree node\(s\) are stored for positions beyond the chain head at position 9: events were removed/,
          ),
        },
      ]);
      const offlineRun = await offline(await exportOf(chain.id), [chain.note]);
      expect(offlineRun.code).toBe(1);
      expect(offlineRun.out).toMatch(
        /NOT CONFIRMED[\s\S]*ends at position 9, below the checkpoint's size 12[\s\S]*events 10–12 were removed/,
      );
      expect((await checkpoint(chain.id).expect(500)).body.error.code).toBe('INTERNAL_ERROR');
    });

    it('a deleted middle event', async () => {
      const chain = await protectedChain('attack-hole');
      await tamper((m) => m.query(`DELETE FROM events WHERE id = audit_ulid_uuid($1)`, [chain.events[5]!.id]));
      const result = (await verifyChain(chain.id).expect(200)).body.data;
      expect(result).toMatchObject({ valid: false, checkedEvents: N - 1, firstInvalidPosition: 6 });
      expect(result.errors).toEqual([
        { position: 6, eventId: null, message: expect.stringMatching(/position 6 is missing/) },
        {
          position: N,
          eventId: chain.events[N - 1]!.id,
          message: expect.stringMatching(/Merkle root of the checkpoint signed at size 12 cannot be recomputed/),
        },
      ]);
      const offlineRun = await offline(await exportOf(chain.id), [chain.note]);
      expect(offlineRun.code).toBe(1);
      expect(offlineRun.out).toMatch(/TAMPERING FOUND[\s\S]*position 6 is missing from an unfiltered export/);
    });

    it('a renumbered event (a deletion hidden by moving the later events down)', async () => {
      const chain = await protectedChain('attack-renumber');
      await tamper(async (m) => {
        await m.query(`DELETE FROM events WHERE id = audit_ulid_uuid($1)`, [chain.events[5]!.id]);
        for (let p = 7; p <= N; p++)
          await m.query(`UPDATE events SET position = $1 WHERE chain_id = audit_ulid_uuid($2) AND position = $3`, [
            p - 1,
            chain.id,
            p,
          ]);
        await m.query(`UPDATE chains SET last_position = $1 WHERE id = audit_ulid_uuid($2)`, [N - 1, chain.id]);
      });
      const result = (await verifyChain(chain.id).expect(200)).body.data;
      expect(result).toMatchObject({ valid: false, checkedEvents: N - 1, firstInvalidPosition: 5 });
      expect(result.errors[0]).toEqual({
        position: 6,
        eventId: chain.events[6]!.id,
        message: expect.stringMatching(/altered/),
      });
      expect(result.errors.map((e: { message: string }) => e.message).join('\n')).toMatch(
        /signed for more events than the chain now has/,
      );
      const offlineRun = await offline(await exportOf(chain.id), [chain.note]);
      expect(offlineRun.code).toBe(1);
      expect(offlineRun.out).toMatch(
        new RegExp(`TAMPERING FOUND[\\s\\S]*position 6 ${chain.events[6]!.id}: stored hash`),
      );
    });

    it('a rewritten chain whose stored checkpoints were replaced: the server cannot tell, the auditor can', async () => {
      const chain = await protectedChain('attack-forge');
      const stranger = generateKeyPairSync('ed25519').privateKey;
      await tamper(async (m) => {
        await m.query(`UPDATE events SET action = 'doc.read' WHERE id = audit_ulid_uuid($1)`, [chain.events[2]!.id]);
        const head = await rehashFrom(m, chain.id, 3);
        const text = `audit-trail/${chain.id}\n${N}\n${hexToB64(head)}\n`;
        await m.query(
          `UPDATE checkpoints SET hash = decode($1, 'hex'), note = $2 WHERE chain_id = audit_ulid_uuid($3)`,
          [head, `${text}\n${foreignSignatureLine(text, 'audit-trail', stranger)}`, chain.id],
        );
      });
      const forged = (await verifyChain(chain.id).expect(200)).body.data;
      // The stored node (2, 0) over positions 1–4 disagrees from position 1 on.
      expect(forged).toMatchObject({ valid: false, firstInvalidPosition: 1 });
      expect(forged.errors[0].message).toMatch(/not signed by this service's checkpoint key/);
      // Without checkpoints the stored Merkle tree (not rewritten here) still tells; test/proofs.e2e-spec.ts
      // rewrites it too, and then only the auditor's checkpoint does.
      await tamper((m) => m.query(`DELETE FROM checkpoints WHERE chain_id = audit_ulid_uuid($1)`, [chain.id]));
      const bare = (await verifyChain(chain.id).expect(200)).body.data;
      expect(bare).toMatchObject({ valid: false, checkpointsChecked: 0 });
      expect(bare.errors).toEqual([
        { position: 1, eventId: null, message: expect.stringMatching(/stored Merkle tree disagrees .*node \(2, 0\)/) },
      ]);
      expect((await offline(await exportOf(chain.id), [chain.note])).code).toBe(1);
    });

    it('stored Merkle nodes deleted or altered, inside windows and across their edges', async () => {
      const chain = await protectedChain('attack-tree');
      const node = (level: number, index: number) => [chain.id, level, index];
      await tamper(async (m) => {
        // Windows of 5: (2, 0) covers positions 1–4, inside the first window; (2, 1) covers 5–8,
        // across the first window's edge, and (2, 2) 9–12 across the second's (the audit checks those).
        await m.query(
          `DELETE FROM merkle_nodes WHERE chain_id = audit_ulid_uuid($1) AND level = $2 AND "index" = $3`,
          node(2, 0),
        );
        for (const [level, index] of [
          [2, 1],
          [2, 2],
        ])
          await m.query(
            `UPDATE merkle_nodes SET hash = sha256(hash) WHERE chain_id = audit_ulid_uuid($1) AND level = $2 AND "index" = $3`,
            node(level!, index!),
          );
      });
      const result = (await verifyChain(chain.id).expect(200)).body.data;
      expect(result).toMatchObject({ valid: false, checkedEvents: N, firstInvalidPosition: 1, checkpointsChecked: 1 });
      expect(result.errors).toEqual([
        {
          position: 1,
          eventId: null,
          message: expect.stringMatching(/stored Merkle tree disagrees with the events: 3 node\(s\) .*node \(2, 0\)/),
        },
      ]);
      // The events and the checkpoint are intact: the offline verifier, which recomputes the tree, passes.
      expect((await offline(await exportOf(chain.id), [chain.note])).code).toBe(0);
    });

    it('reports a wrong key or a malformed export as bad input (exit 2)', async () => {
      const chain = await protectedChain('attack-input');
      const exported = await exportOf(chain.id);
      expect((await offline(exported, [chain.note], ['audit-trail+00000000+AAAA'])).code).toBe(2);
      expect((await offline(exported, [chain.note], [])).code).toBe(2);
      expect((await offline({ data: [{ id: 1 }] }, [])).code).toBe(2);
    });
  });

  describe('rows written beside the service, with its own role (no trigger is disabled)', () => {
    /** A checkpoint row the service did not sign: a note under a key it does not know. */
    const forge = (chainId: string, size: number) =>
      t.dataSource.query(
        `INSERT INTO checkpoints (chain_id, size, hash, key_id, note) VALUES (audit_ulid_uuid($1), $2, decode($3, 'hex'), $4, $5)`,
        [
          chainId,
          size,
          'ab'.repeat(32),
          '00000000',
          `audit-trail/${chainId}\n${size}\n${Buffer.alloc(32, 0xab).toString('base64')}\n\n\u2014 forger AAAAAAAA\n`,
        ],
      );

    it('a forged checkpoint above the head, then at it: signing goes on, and /verify reports the forged row', async () => {
      const chain = await chainOf('forged-checkpoint', 3);
      const signed3 = (await checkpoint(chain.id).expect(200)).text;
      await forge(chain.id, 5);
      expect((await checkpoint(chain.id).expect(200)).text).toBe(signed3);
      await post('forged-checkpoint', 4).expect(201);
      await post('forged-checkpoint', 5).expect(201);
      const note5 = (await checkpoint(chain.id).expect(200)).text;
      const opened = openCheckpoint(note5, readVkey(vkey));
      expect(opened).toMatchObject({ ok: true, size: 5 });
      const hashes = (await readChainEvents(t.dataSource.manager, chain.id)).map((e) => e.hash);
      if (opened.ok) expect(opened.hash.toString('hex')).toBe(independentRoot(hashes.slice(0, 5)));
      expect((await checkpoint(chain.id).expect(200)).text).toBe(note5);
      await post('forged-checkpoint', 6).expect(201);
      await checkpoint(chain.id).expect(200);
      const result = (await verifyChain(chain.id).expect(200)).body.data;
      expect(result.valid).toBe(false);
      expect(result.errors).toEqual([
        expect.objectContaining({ position: 5, message: expect.stringContaining('not signed by this service') }),
      ]);
    });

    it('a forged checkpoint above the head is reported by /verify while the chain is below it', async () => {
      const chain = await chainOf('forged-above', 2);
      await forge(chain.id, 9);
      await checkpoint(chain.id).expect(200);
      const result = (await verifyChain(chain.id).expect(200)).body.data;
      expect(result.valid).toBe(false);
      expect(result.errors).toEqual([
        expect.objectContaining({
          position: 9,
          message: expect.stringContaining('more events than the chain now has'),
        }),
      ]);
    });
  });

  describe('concurrent checkpoint requests during concurrent appends', () => {
    it('never sign two notes of one size with different hashes, nor go backwards', async () => {
      const seed = (await post('ckpt-race', 0).expect(201)).body.data;
      const chainId: string = seed.chain.id;
      const known = readVkey(vkey);
      const notes: string[] = [];
      // Six appenders and four signers, each sequential, all at once: signing interleaves with appends.
      let appending = 6;
      const appenders = Array.from({ length: 6 }, async (_, w) => {
        for (let i = 0; i < 20; i++) await post('ckpt-race', w * 100 + i).expect(201);
        appending--;
      });
      const signers = Array.from({ length: 4 }, async () => {
        for (let i = 0; i < 500 && appending > 0; i++) notes.push((await checkpoint(chainId).expect(200)).text);
      });
      await Promise.all([...appenders, ...signers]);
      const bySize = new Map<number, Set<string>>();
      for (const note of notes) {
        const opened = openCheckpoint(note, known);
        if (!opened.ok) throw new Error(opened.why);
        bySize.set(opened.size, (bySize.get(opened.size) ?? new Set()).add(opened.hash.toString('hex')));
      }
      for (const hashes of bySize.values()) expect(hashes.size).toBe(1);
      const events = await t.dataSource.query<{ position: number; hash: string }[]>(
        `SELECT position::int AS position, encode(hash, 'hex') AS hash FROM events WHERE chain_id = audit_ulid_uuid($1)`,
        [chainId],
      );
      const inOrder = events.sort((a, b) => a.position - b.position).map((e) => e.hash);
      const rootAt = (size: number) => independentRoot(inOrder.slice(0, size));
      for (const [size, hashes] of bySize) expect([...hashes][0]).toBe(rootAt(size));
      const stored = await t.dataSource.query<{ size: number; hash: string }[]>(
        `SELECT size::int AS size, encode(hash, 'hex') AS hash FROM checkpoints WHERE chain_id = audit_ulid_uuid($1)`,
        [chainId],
      );
      expect(stored.map((s) => s.size).sort((a, b) => a - b)).toEqual([...bySize.keys()].sort((a, b) => a - b));
      for (const s of stored) expect(s.hash).toBe(rootAt(s.size));
      const final = (await checkpoint(chainId).expect(200)).text;
      expect(openCheckpoint(final, known)).toMatchObject({ ok: true, size: 121 });
      expect((await verifyChain(chainId).expect(200)).body.data).toMatchObject({
        valid: true,
        checkedEvents: 121,
        checkpointsChecked: stored.length + (stored.some((s) => s.size === 121) ? 0 : 1),
      });
    });
  });

  describe('whole-chain verification during appends', () => {
    it('stays valid while the chain grows, checking up to the head it read first', async () => {
      const first = (await post('verify-live', 0).expect(201)).body.data;
      await checkpoint(first.chain.id).expect(200);
      let appending = true;
      const appender = (async () => {
        for (let i = 1; i <= 60; i++) await post('verify-live', i).expect(201);
        appending = false;
      })();
      const results: { valid: boolean; checkedEvents: number }[] = [];
      while (appending) {
        results.push((await verifyChain(first.chain.id).expect(200)).body.data);
        await checkpoint(first.chain.id).expect(200);
      }
      await appender;
      expect(results.length).toBeGreaterThan(0);
      for (const r of results) expect(r).toMatchObject({ valid: true, errors: [] });
      expect((await verifyChain(first.chain.id).expect(200)).body.data).toMatchObject({
        valid: true,
        checkedEvents: 61,
        lastPosition: 61,
      });
    });
  });

  (usingPostgres() ? describe : describe.skip)('worker threads of whole-chain verification', () => {
    const workerConnections = `SELECT pid FROM pg_stat_activity WHERE application_name = 'audit-trail-service-verify' AND datname = current_database()`;

    it('hash on their own connections, and open new ones when the database closed them', async () => {
      const chain = await chainOf('verify-workers', 23);
      expect((await verifyChain(chain.id).expect(200)).body.data).toMatchObject({
        valid: true,
        checkedEvents: 23,
        errors: [],
      });
      const before = await t.dataSource.query<{ pid: number }[]>(workerConnections);
      expect(before.length).toBeGreaterThan(0);
      await t.dataSource.query(`SELECT pg_terminate_backend(pid) FROM (${workerConnections}) w`);
      expect((await verifyChain(chain.id).expect(200)).body.data).toMatchObject({
        valid: true,
        checkedEvents: 23,
        errors: [],
      });
      const after = (await t.dataSource.query<{ pid: number }[]>(workerConnections)).map((c) => c.pid);
      expect(after.length).toBeGreaterThan(0);
      expect(after.filter((pid) => before.some((c) => c.pid === pid))).toEqual([]);
    });
  });

  describe('the verify function on an export built from the wire', () => {
    it('confirms a checkpoint by the Merkle root of an export from position 1, and says why it cannot from a later start', async () => {
      const chain = await chainOf('ckpt-after', 4);
      const note = (await checkpoint(chain.id).expect(200)).text;
      await post('ckpt-after', 5).expect(201);
      const doc = readExportDocument(await exportOf(chain.id));
      const whole = verifyExport(doc, [{ label: 'cp', note }], [parseVerifierKey(vkey)]);
      // Event 5 came after the checkpoint: nothing signed covers it yet.
      expect(whole).toMatchObject({ outcome: 'unconfirmed', chains: [{ confirmedSize: 4, unconfirmed: [[5, 5]] }] });
      expect(whole.checkpoints[0]).toMatchObject({
        status: 'confirmed',
        message: expect.stringMatching(/Merkle root of the exported events 1–4 is the signed root/),
      });
      const tail = { ...doc, count: null, events: doc.events.filter((e) => e.chain.position >= 5) };
      const report = verifyExport(tail, [{ label: 'cp', note }], [parseVerifierKey(vkey)]);
      expect(report.outcome).toBe('unconfirmed');
      expect(report.checkpoints[0]).toMatchObject({
        status: 'unconfirmed',
        message: expect.stringMatching(/starts at position 5, not 1/),
      });
    });
  });
});
