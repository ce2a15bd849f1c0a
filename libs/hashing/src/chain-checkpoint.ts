import { KeyObject } from 'node:crypto';
import { CHAIN_ID } from '@app/common/ids';
import { HEX_HASH, HEX_HASH_TEXT } from './event-hash';
import {
  Checkpoint,
  formatCheckpoint,
  NoteFormatError,
  NoteVerifier,
  parseCheckpoint,
  signNote,
  verifyNote,
} from './signed-note';

/*
 * What a checkpoint of one of our chains says. It is a tlog-checkpoint whose
 *   origin = "audit-trail/<chainId>"  (one stable line per chain)
 *   size   = the chain's lastPosition (number of events)
 *   hash   = the RFC 9162 Merkle root of the chain's first `size` events (docs/contract.md §10: leaf
 *            data = each event's 32-byte hash, merkle.ts), so one earlier event or an earlier
 *            checkpoint is proven with O(log n) hashes (inclusion and consistency proofs).
 *            For an empty chain (size 0) it is SHA-256(""), the empty tree's root.
 * The one signing key is named CHECKPOINT_KEY_NAME for every chain (tlog-checkpoint's "the key
 * name SHOULD match the origin" is a recommendation; one verifier key for all chains is simpler
 * for auditors).
 */
export const CHECKPOINT_KEY_NAME = 'audit-trail';
export const CHECKPOINT_ORIGIN_PREFIX = 'audit-trail/';

export interface ChainCheckpoint {
  chainId: string;
  size: number;
  /** The Merkle root of the first `size` events, 64 lowercase hex characters. */
  hash: string;
}

export function chainCheckpointOrigin(chainId: string): string {
  return `${CHECKPOINT_ORIGIN_PREFIX}${chainId}`;
}

/** The note text (body) of a chain checkpoint. */
export function chainCheckpointText({ chainId, size, hash }: ChainCheckpoint): string {
  if (!HEX_HASH.test(hash)) throw new NoteFormatError(`a checkpoint root is ${HEX_HASH_TEXT}`);
  return formatCheckpoint({ origin: chainCheckpointOrigin(chainId), size, hash: Buffer.from(hash, 'hex') });
}

export function signChainCheckpoint(checkpoint: ChainCheckpoint, privateKey: KeyObject): string {
  return signNote(chainCheckpointText(checkpoint), { name: CHECKPOINT_KEY_NAME, privateKey });
}

/** Reads a parsed checkpoint as one of ours; throws NoteFormatError when it is not. */
export function toChainCheckpoint(checkpoint: Checkpoint): ChainCheckpoint {
  const chainId = checkpoint.origin.startsWith(CHECKPOINT_ORIGIN_PREFIX)
    ? checkpoint.origin.slice(CHECKPOINT_ORIGIN_PREFIX.length)
    : '';
  if (!CHAIN_ID.test(chainId))
    throw new NoteFormatError(`the origin '${checkpoint.origin}' is not '${CHECKPOINT_ORIGIN_PREFIX}<chain id>'`);
  if (checkpoint.hash.length !== 32) throw new NoteFormatError('the checkpoint hash is not 32 bytes');
  return { chainId, size: checkpoint.size, hash: checkpoint.hash.toString('hex') };
}

export type ChainCheckpointVerification =
  | { ok: true; checkpoint: ChainCheckpoint; verifiedBy: string[] }
  | { ok: false; reason: 'malformed' | 'bad-signature' | 'no-known-signature'; message: string };

/** Verifies a note's signatures, then reads it as a chain checkpoint. */
export function verifyChainCheckpoint(
  note: string | Uint8Array,
  verifiers: readonly NoteVerifier[],
): ChainCheckpointVerification {
  const verified = verifyNote(note, verifiers);
  if (!verified.ok) return verified;
  try {
    return { ok: true, checkpoint: toChainCheckpoint(parseCheckpoint(verified.text)), verifiedBy: verified.verifiedBy };
  } catch (error) {
    if (error instanceof NoteFormatError) return { ok: false, reason: 'malformed', message: error.message };
    throw error;
  }
}
