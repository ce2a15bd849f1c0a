import {
  ChainCheckpoint,
  leafHash,
  NoteVerifier,
  parseCheckpoint,
  verifiedCosignatures,
  verifyChainCheckpoint,
  verifyInclusion,
  verifyNote,
} from '@app/hashing';
import { AuditTrailVerificationError } from '../errors';
import type { WitnessedCheckpoint } from '../types';

/**
 * A witnessed bundle (GET /v1/chain/:chainId/checkpoint/witnessed, docs/contract.md §18) held
 * against the pinned keys: the chain checkpoint and the log checkpoint are signed by the service's
 * key (else `signature`), the log checkpoint carries at least `quorum` valid cosignatures of the
 * given witness keys, and the chain checkpoint's note is a leaf of the log checkpoint's tree (else
 * `witnesses`). The bundle's own `witnesses` count is not read: only the keys are trusted.
 */
export function checkWitnessedBundle(
  bundle: WitnessedCheckpoint,
  logKeys: readonly NoteVerifier[],
  witnesses: readonly NoteVerifier[],
  quorum: number,
): { checkpoint: ChainCheckpoint; cosigners: string[] } {
  const chain = verifyChainCheckpoint(bundle.checkpoint, logKeys);
  if (!chain.ok) throw new AuditTrailVerificationError('signature', `the witnessed chain checkpoint: ${chain.message}`);
  const log = verifyNote(bundle.logCheckpoint, logKeys);
  if (!log.ok) throw new AuditTrailVerificationError('signature', `the log checkpoint: ${log.message}`);
  const { size, hash: root } = parseCheckpoint(log.text);
  const cosigners = verifiedCosignatures(bundle.logCheckpoint, witnesses).map((c) => c.witness);
  if (cosigners.length < quorum)
    throw new AuditTrailVerificationError(
      'witnesses',
      `the log checkpoint carries ${cosigners.length} valid cosignature(s) of the given witnesses, fewer than the quorum of ${quorum}`,
    );
  const proof = bundle.proof.map((h) => Buffer.from(h, 'hex'));
  if (!verifyInclusion(bundle.leafIndex, size, leafHash(Buffer.from(bundle.checkpoint, 'utf8')), proof, root))
    throw new AuditTrailVerificationError(
      'witnesses',
      `the chain checkpoint is not leaf ${bundle.leafIndex} of the witnessed log checkpoint's tree of size ${size}`,
    );
  return { checkpoint: chain.checkpoint, cosigners };
}
