import { generateKeyPairSync } from 'node:crypto';
import {
  CHECKPOINT_KEY_NAME,
  computeEventHash,
  eventLeafHash,
  formatVerifierKey,
  GENESIS_HASH,
  merkleRoot,
  signChainCheckpoint,
} from '@app/hashing';
import { AuditTrailVerificationError } from '../errors';
import type { ChainsResource } from '../resources/chains';
import type { EventsResource } from '../resources/events';
import type { AuditEvent, InclusionProof } from '../types';
import { verifyReceipt } from './verify-receipt';

/*
 * The version-1 path (docs/contract.md §3): chains made before hash version 2 keep §3's rule, and the
 * service makes no new ones, so the e2e suite (test/client-verify.e2e-spec.ts) sees version 2 only.
 */
describe('verifyReceipt on a version-1 event', () => {
  const key = generateKeyPairSync('ed25519').privateKey;
  const vkey = formatVerifierKey(CHECKPOINT_KEY_NAME, key);
  const chainId = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X';
  const payload = {
    id: 'evt_01JDQ8Z5X00000000000000001',
    chainId,
    position: 1,
    actor: 'alice',
    action: 'invoice.approve',
    resource: 'invoice:42',
    context: { amount: 12.5 },
    timestamp: '2026-11-22T07:24:53.449Z',
    previousHash: GENESIS_HASH,
  };
  const hash = computeEventHash(payload);
  const event = {
    ...payload,
    chain: { id: chainId, name: 'default', position: 1 },
    hash,
    createdAt: payload.timestamp,
  } as AuditEvent;
  const note = signChainCheckpoint({ chainId, size: 1, hash: merkleRoot([eventLeafHash(hash)]).toString('hex') }, key);
  const sut = (served: AuditEvent) => ({
    events: {
      get: () => Promise.resolve(served),
      proof: () => Promise.resolve({ proof: [] } as unknown as InclusionProof),
    } as unknown as EventsResource,
    chains: { checkpoint: () => Promise.resolve(note) } as unknown as ChainsResource,
  });
  const receipt = { id: payload.id, chainId, position: 1, hash };

  it('recomputes §3’s hash when the event carries no hashing', async () => {
    await expect(verifyReceipt(sut(event), receipt, { key: vkey })).resolves.toMatchObject({ hashVersion: 1 });
  });

  it('refuses a version-1 event whose values changed', async () => {
    const altered = { ...event, actor: 'mallory' };
    const refusal = verifyReceipt(sut(altered), receipt, { key: vkey });
    await expect(refusal).rejects.toBeInstanceOf(AuditTrailVerificationError);
    await expect(refusal).rejects.toMatchObject({ reason: 'hash' });
  });
});
