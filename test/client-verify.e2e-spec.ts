import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CHECKPOINT_KEY_NAME,
  ed25519PrivateKeyFromSeed,
  eventLeafHash,
  formatVerifierKey,
  merkleRoot,
  parseVerifierKey,
  proveInclusion,
  signChainCheckpoint,
} from '@app/hashing';
import { AuditTrailClient, AuditTrailVerificationError, Receipt, receiptOf } from '@audit-trail/client';
import { StateStore } from '../apps/witness/src/state-store';
import { Witness } from '../apps/witness/src/witness';
import { createWitnessServer } from '../apps/witness/src/witness-server';
import { WitnessingService } from '../apps/api/src/witnessing/witnessing.service';
import { listening } from './support/client-app';
import { KEYS, startTestApp, TestApp } from './support/test-app';

/*
 * docs/contract.md §20, verifyReceipt against the real service and a real witness (apps/witness, in
 * process): an honest receipt verifies (alone, witnessed, and against a trusted checkpoint that it
 * extends); a served event altered, a forged inclusion proof, a checkpoint signed by another key, a
 * history rewritten by whoever holds the signing key, and a witness quorum not met are each refused
 * with the reason that names the check. The tampering is done between the client and the service
 * (its fetch), as a hostile service or network would.
 */
const LOG_ORIGIN = 'audit-trail/checkpoint-log';

describe('verifyReceipt (docs/contract.md §20)', () => {
  const seed = randomBytes(32);
  const signingKey = ed25519PrivateKeyFromSeed(seed);
  const vkey = formatVerifierKey(CHECKPOINT_KEY_NAME, signingKey);
  const witnessKey = generateKeyPairSync('ed25519').privateKey;
  const witnessVkey = formatVerifierKey('witness.test/w1', witnessKey, 0x04);
  const strangerVkey = formatVerifierKey('witness.test/w2', generateKeyPairSync('ed25519').privateKey, 0x04);
  const dir = mkdtempSync(join(tmpdir(), 'client-verify-'));
  let server: Server;
  let t: TestApp;
  let client: AuditTrailClient;
  /** Rewrites an answer on its way to the client; null: answers pass untouched. */
  let tamper: ((path: string, res: Response) => Promise<Response>) | null = null;

  beforeAll(async () => {
    const witness = new Witness({
      name: 'witness.test/w1',
      privateKey: witnessKey,
      logs: new Map([[LOG_ORIGIN, { origin: LOG_ORIGIN, verifiers: [parseVerifierKey(vkey)] }]]),
      state: await StateStore.open(join(dir, 'witness-state.json')),
    });
    server = createWitnessServer(witness, { error: () => undefined });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const witnessUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    t = await startTestApp({
      signingKey: seed.toString('base64'),
      witnessIntervalSeconds: 1,
      witnesses: [{ key: witnessVkey, url: witnessUrl }],
      witnessQuorum: 1,
    });
    const tampering: typeof fetch = async (url, init) => {
      const res = await fetch(url, init);
      const { pathname, search } = new URL(url instanceof Request ? url.url : url.toString());
      return tamper ? tamper(pathname + search, res) : res;
    };
    client = new AuditTrailClient({ baseUrl: await listening(t), apiKey: KEYS.acme, fetch: tampering });
  });
  afterEach(() => (tamper = null));
  afterAll(async () => {
    await t?.close();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  async function appendSome(chain: string, n: number): Promise<Receipt[]> {
    const events = Array.from({ length: n }, (_, i) => ({
      actor: `user-${i}`,
      action: 'doc.update',
      chain,
      context: { i },
    }));
    return (await client.events.appendBatch(events)).map(receiptOf);
  }

  type Served = { id: string; action: string; context: Record<string, unknown> | null };
  /** Serves the events `which` picks with another context, alone and in the pages that list them. */
  const alterEvents =
    (which: (e: Served) => boolean) =>
    async (path: string, res: Response): Promise<Response> => {
      if (!path.startsWith('/v1/events') || path.includes('/proof') || res.status !== 200) return res;
      const body = (await res.json()) as { data: Served | Served[] };
      for (const e of Array.isArray(body.data) ? body.data : [body.data]) if (which(e)) e.context = { altered: true };
      return json(body);
    };
  const alterEvent = (id: string) => alterEvents((e) => e.id === id);
  const json = (body: unknown) =>
    new Response(JSON.stringify(body), { headers: { 'Content-Type': 'application/json' } });
  const refusal = (promise: Promise<unknown>) =>
    promise.then(
      () => 'verified',
      (error: unknown) => (error instanceof AuditTrailVerificationError ? error.reason : `threw ${String(error)}`),
    );

  it('verifies an honest receipt: hash (version 2), inclusion, signature', async () => {
    const receipts = await appendSome('verify-honest', 7);
    const check = await client.verifyReceipt(receipts[2]!, { key: vkey });
    expect(check).toMatchObject({ hashVersion: 2, witnessedBy: [], trustedSize: null });
    expect(check.checkpoint).toMatchObject({ chainId: receipts[2]!.chainId, size: 7 });
  });

  it('refuses an event the service serves altered (hash)', async () => {
    const [receipt] = await appendSome('verify-hash', 3);
    tamper = async (path, res) => {
      if (!path.startsWith(`/v1/events/${receipt!.id}`) || path.includes('/proof')) return res;
      const body = (await res.json()) as { data: { context: Record<string, unknown> } };
      body.data.context = { i: 99 };
      return json(body);
    };
    expect(await refusal(client.verifyReceipt(receipt!, { key: vkey }))).toBe('hash');
  });

  it('refuses a forged inclusion proof (inclusion)', async () => {
    const receipts = await appendSome('verify-proof', 6);
    tamper = async (path, res) => {
      if (!path.includes('/proof')) return res;
      const body = (await res.json()) as { data: { proof: string[] } };
      body.data.proof[0] = randomBytes(32).toString('hex');
      return json(body);
    };
    expect(await refusal(client.verifyReceipt(receipts[1]!, { key: vkey }))).toBe('inclusion');
  });

  it('refuses a checkpoint signed by another key (signature)', async () => {
    const receipts = await appendSome('verify-key', 4);
    const other = generateKeyPairSync('ed25519').privateKey;
    tamper = async (path, res) => {
      if (!path.endsWith('/checkpoint')) return res;
      const [, size, root] = (await res.text()).split('\n');
      const hash = Buffer.from(root!, 'base64').toString('hex');
      return new Response(signChainCheckpoint({ chainId: receipts[0]!.chainId, size: Number(size), hash }, other));
    };
    expect(await refusal(client.verifyReceipt(receipts[0]!, { key: vkey }))).toBe('signature');
  });

  it('holds each newer checkpoint to the trusted one, and refuses a rewritten history (consistency)', async () => {
    const trustDir = join(dir, 'trust');
    const first = await appendSome('verify-trust', 5);
    expect((await client.verifyReceipt(first[4]!, { key: vkey, trustDir })).trustedSize).toBeNull();
    const more = await appendSome('verify-trust', 6);
    const honest = await client.verifyReceipt(more[0]!, { key: vkey, trustDir });
    expect(honest).toMatchObject({ trustedSize: 5, checkpoint: { size: 11 } });
    await appendSome('verify-trust', 5);
    // Whoever holds the signing key rewrites the chain: the receipt's event stays where it was, every
    // other event is replaced, and the new tree is signed at the chain's size with a proof that fits it.
    const target = more[2]!;
    const leaves = Array.from({ length: 16 }, (_, i) =>
      i === target.position - 1 ? eventLeafHash(target.hash) : eventLeafHash(randomBytes(32).toString('hex')),
    );
    const node = ({ level, index }: { level: number; index: number }) =>
      merkleRoot(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level));
    const proof = await proveInclusion(target.position - 1, 16, (ids) => Promise.resolve(ids.map(node)));
    const rewritten = signChainCheckpoint(
      { chainId: target.chainId, size: 16, hash: merkleRoot(leaves).toString('hex') },
      signingKey,
    );
    tamper = async (path, res) => {
      if (path.endsWith('/checkpoint')) return new Response(rewritten);
      if (!path.includes('/proof')) return res;
      const body = (await res.json()) as { data: { proof: string[] } };
      body.data.proof = proof.map((h) => h.toString('hex'));
      return json(body);
    };
    // Without the trusted state the forgery passes every other check: only consistency catches it.
    await expect(client.verifyReceipt(target, { key: vkey })).resolves.toMatchObject({ checkpoint: { size: 16 } });
    // A checkpoint verified under trustDir serves the receipts it covers for checkpointMaxAgeMs (the
    // forged one would be fetched, and caught, at the next fetch); 0 fetches it now.
    const fresh = { key: vkey, trustDir, checkpointMaxAgeMs: 0 };
    expect(await refusal(client.verifyReceipt(target, fresh))).toBe('consistency');
    tamper = null;
    await expect(client.verifyReceipt(target, fresh)).resolves.toMatchObject({ trustedSize: 11 });
  });

  it('verifies many receipts of a chain at once, and names the one whose event the service serves altered', async () => {
    const receipts = [...(await appendSome('verify-many', 250)), ...(await appendSome('verify-many', 250))];
    const started = Date.now();
    const verdicts = await client.verifyReceipts(receipts, { key: vkey });
    const ms = Date.now() - started;
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
    expect(verdicts.map((v) => v.ok && v.check.checkpoint.size)).toEqual(receipts.map(() => 500));
    console.log(`verifyReceipts: 500 receipts of one chain in ${ms} ms`);
    tamper = alterEvent(receipts[17]!.id);
    const altered = await client.verifyReceipts(receipts, { key: vkey });
    expect(
      altered.flatMap((v) => (v.ok ? [] : [[v.receipt.id, 'reason' in v.error ? v.error.reason : v.error.code]])),
    ).toEqual([[receipts[17]!.id, 'hash']]);
  });

  it('the recorder’s background checker reports the receipt whose event the service serves altered', async () => {
    const failures: { id: string; reason: string }[] = [];
    const recorder = client.recorder({
      lingerMs: 5,
      checkReceipts: {
        key: vkey,
        sample: 1,
        onFailure: (receipt, error) =>
          failures.push({ id: receipt.id, reason: 'reason' in error ? error.reason : error.code }),
      },
    });
    tamper = alterEvents((e) => e.action === 'doc.checked' && e.context?.i === 9);
    const ids: string[] = [];
    const reading = (async () => {
      for await (const r of recorder.receipts()) ids.push(r.id);
    })();
    for (let i = 0; i < 60; i++) await recorder.record({ actor: `user-${i}`, action: 'doc.checked', context: { i } });
    await recorder.flush();
    const deadline = Date.now() + 10_000;
    while (recorder.checker!.counters.checked < 60 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 20));
    await recorder.close();
    await reading;
    expect(recorder.checker!.counters).toEqual({ checked: 60, failed: 1, skipped: 0 });
    expect(failures).toEqual([{ id: ids[9], reason: 'hash' }]);
  });

  it('demands the witnesses’ quorum when witness keys are given (witnesses)', async () => {
    const receipts = await appendSome('verify-witnessed', 3);
    await client.chains.checkpoint(receipts[0]!.chainId);
    const deadline = Date.now() + 20_000;
    for (;;) {
      await t.app.get(WitnessingService).round();
      const ok = await client.chains.witnessedCheckpoint(receipts[0]!.chainId).then(
        () => true,
        () => false,
      );
      if (ok) break;
      if (Date.now() > deadline) throw new Error('no witnessed checkpoint within 20 s');
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const witnessed = await client.verifyReceipt(receipts[1]!, { key: vkey, witnesses: [witnessVkey] });
    expect(witnessed.witnessedBy).toHaveLength(1);
    const options = { key: vkey, witnesses: [witnessVkey, strangerVkey], quorum: 2 };
    expect(await refusal(client.verifyReceipt(receipts[1]!, options))).toBe('witnesses');
    const unwitnessed = await appendSome('verify-unwitnessed', 1);
    expect(await refusal(client.verifyReceipt(unwitnessed[0]!, { key: vkey, witnesses: [witnessVkey] }))).toBe(
      'witnesses',
    );
  });
});
