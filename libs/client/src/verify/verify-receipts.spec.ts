import { generateKeyPairSync } from 'node:crypto';
import {
  CHECKPOINT_KEY_NAME,
  computeEventHash,
  eventLeafHash,
  formatVerifierKey,
  GENESIS_HASH,
  merkleRoot,
  proveInclusion,
  signChainCheckpoint,
} from '@app/hashing';
import type { ChainsResource } from '../resources/chains';
import type { EventsResource } from '../resources/events';
import { type AuditEvent, type InclusionProof, receiptOf } from '../types';
import { CheckpointCache } from './checkpoint-cache';
import { verifyReceipt } from './verify-receipt';
import { verifyReceipts } from './verify-receipts';

/*
 * The checkpoint cache and the batch form over a served chain of real hashes (version 1), real
 * Merkle proofs and a real signature, counting the calls each makes.
 */
describe('verifyReceipt with the checkpoint cache, and verifyReceipts', () => {
  const key = generateKeyPairSync('ed25519').privateKey;
  const vkey = formatVerifierKey(CHECKPOINT_KEY_NAME, key);
  const chainId = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X';
  const SIZE = 300;

  function chain(size = SIZE): AuditEvent[] {
    const events: AuditEvent[] = [];
    let previousHash = GENESIS_HASH;
    for (let position = 1; position <= size; position++) {
      const payload = {
        id: `evt_01JDQ8Z5X0000000000000${String(position).padStart(4, '0')}`,
        chainId,
        position,
        actor: `user-${position}`,
        action: 'invoice.approve',
        resource: null,
        context: { position },
        timestamp: new Date(1_790_000_000_000 + position).toISOString(),
        previousHash,
      };
      const hash = computeEventHash(payload);
      events.push({ ...payload, chain: { id: chainId, name: 'default', position }, hash } as unknown as AuditEvent);
      previousHash = hash;
    }
    return events;
  }

  /** Serves `events`; its checkpoint signs the first `signed` of them. */
  function service(events: AuditEvent[], signed = events.length) {
    const leaves = events.slice(0, signed).map((e) => eventLeafHash(e.hash));
    const note = signChainCheckpoint({ chainId, size: signed, hash: merkleRoot(leaves).toString('hex') }, key);
    const calls = { get: 0, proof: 0, checkpoint: 0, list: 0 };
    const node = ({ level, index }: { level: number; index: number }) =>
      merkleRoot(leaves.slice(index * 2 ** level, (index + 1) * 2 ** level));
    const sut = {
      events: {
        get: (id: string) => {
          calls.get++;
          return Promise.resolve(events.find((e) => e.id === id)!);
        },
        proof: async (id: string, size: number) => {
          calls.proof++;
          const index = events.findIndex((e) => e.id === id);
          const proof = await proveInclusion(index, size, (ids) => Promise.resolve(ids.map(node)));
          return { proof: proof.map((h) => h.toString('hex')) } as unknown as InclusionProof;
        },
        list: async function* () {
          for (let i = events.length - 1; i >= 0; i--) {
            await Promise.resolve();
            if ((events.length - 1 - i) % 200 === 0) calls.list++;
            yield events[i]!;
          }
        },
      } as unknown as EventsResource,
      chains: {
        checkpoint: () => {
          calls.checkpoint++;
          return Promise.resolve(note);
        },
      } as unknown as ChainsResource,
    };
    return { sut, calls };
  }

  it('fetches and verifies the checkpoint once for many receipts of a chain, then the event and its proof each', async () => {
    const events = chain();
    const { sut, calls } = service(events);
    const cache = new CheckpointCache();
    const checks = await Promise.all(
      events.slice(0, 100).map((e) => verifyReceipt(sut, receiptOf(e), { key: vkey }, cache)),
    );
    expect(checks.every((c) => c.checkpoint.size === SIZE)).toBe(true);
    expect(calls).toEqual({ get: 100, proof: 100, checkpoint: 1, list: 0 });
  });

  it('fetches the checkpoint again once it is older than checkpointMaxAgeMs (0: for every receipt)', async () => {
    const events = chain();
    const { sut, calls } = service(events);
    const cache = new CheckpointCache();
    for (const e of events.slice(0, 3))
      await verifyReceipt(sut, receiptOf(e), { key: vkey, checkpointMaxAgeMs: 0 }, cache);
    expect(calls.checkpoint).toBe(3);
  });

  it('proves dense receipts by the chain read whole: no proof fetched, each event hash recomputed', async () => {
    const events = chain();
    const { sut, calls } = service(events);
    const verdicts = await verifyReceipts(sut, events.map(receiptOf), { key: vkey }, new CheckpointCache());
    expect(verdicts.filter((v) => !v.ok)).toEqual([]);
    expect(verdicts.map((v) => v.receipt.position)).toEqual(events.map((e) => e.chain.position));
    expect(calls).toEqual({ get: 0, proof: 0, checkpoint: 1, list: 2 });
  });

  it('falls back to one by one when the listed chain does not lead to the signed root, naming the receipt that fails', async () => {
    const events = chain();
    const { sut } = service(events);
    const receipts = events.map(receiptOf);
    // The service serves another hash for event 42 than the one it signed and gave in the receipt.
    events[41] = { ...events[41]!, hash: 'ab'.repeat(32) };
    const verdicts = await verifyReceipts(sut, receipts, { key: vkey }, new CheckpointCache());
    const failed = verdicts.filter((v) => !v.ok);
    expect(failed.map((v) => [v.receipt.position, !v.ok && 'reason' in v.error ? v.error.reason : null])).toEqual([
      [42, 'hash'],
    ]);
  });

  it('verifies sparse receipts one by one (a page per two receipts is the break-even)', async () => {
    const events = chain(401);
    const { sut, calls } = service(events);
    const verdicts = await verifyReceipts(sut, [receiptOf(events[7]!)], { key: vkey }, new CheckpointCache());
    expect(verdicts[0]!.ok).toBe(true);
    expect(calls).toMatchObject({ get: 1, proof: 1, checkpoint: 1, list: 0 });
  });

  it('gives the receipts a checkpoint covers their own verdicts when others of the chain lie beyond it', async () => {
    const events = chain(SIZE + 1);
    const { sut } = service(events, SIZE);
    const beyond = receiptOf(events[SIZE]!);
    const verdicts = await verifyReceipts(
      sut,
      [...events.slice(0, 20).map(receiptOf), beyond],
      { key: vkey },
      new CheckpointCache(),
    );
    expect(verdicts.filter((v) => v.ok)).toHaveLength(20);
    expect(verdicts[20]).toMatchObject({ ok: false, error: { reason: 'inclusion' } });
  });

  it('refuses a receipt beyond the checkpoint (inclusion), whichever way it goes', async () => {
    const events = chain(SIZE + 1);
    const { sut } = service(events, SIZE);
    const beyond = receiptOf(events[SIZE]!);
    const [verdict] = await verifyReceipts(sut, [beyond], { key: vkey }, new CheckpointCache());
    expect(verdict).toMatchObject({ ok: false, error: { reason: 'inclusion' } });
  });

  it('gives verdicts, never a TypeError, when the listing holds an event at a position that is not one of the chain (0, -1, 1.5, a string)', async () => {
    for (const bad of [0, -1, 1.5, '5']) {
      const events = chain();
      const { sut } = service(events);
      const receipts = events.map(receiptOf);
      // The listing leaves out the event at position 5 and gives another in its stead, at a position no tree has.
      const listed = events.filter((e) => e.chain.position !== 5);
      listed.push({ ...events[4]!, chain: { ...events[4]!.chain, position: bad as number } });
      sut.events.list = async function* () {
        for (const e of listed) yield await Promise.resolve(e);
      };
      const verdicts = await verifyReceipts(sut, receipts, { key: vkey }, new CheckpointCache());
      expect(verdicts.filter((v) => !v.ok)).toEqual([]);
    }
  });

  it('gives verdicts, never a RangeError, when a listed event has a hash that is not one', async () => {
    const events = chain();
    const { sut } = service(events);
    const receipts = events.map(receiptOf);
    events[9] = { ...events[9]!, hash: 'not a hash' };
    const verdicts = await verifyReceipts(sut, receipts, { key: vkey }, new CheckpointCache());
    expect(verdicts.filter((v) => !v.ok).map((v) => v.receipt.position)).toEqual([10]);
  });

  it('gives a verdict, never a TypeError, to a receipt whose position is not one of a chain', async () => {
    const events = chain();
    const { sut } = service(events);
    const receipts = events.map(receiptOf);
    const odd = { ...receipts[3]!, position: 3.5 };
    const verdicts = await verifyReceipts(sut, [...receipts, odd], { key: vkey }, new CheckpointCache());
    expect(verdicts.filter((v) => !v.ok).map((v) => v.receipt)).toEqual([odd]);
  });
});
