import {
  ChainCheckpoint,
  HEX_HASH,
  leafHash,
  NoteVerifier,
  parseCheckpoint,
  verifiedCosignatures,
  verifyChainCheckpoint,
  verifyInclusion,
  verifyNote,
} from '@app/hashing';
import { InputError } from '../verify-export/export-document';

/*
 * A witnessed bundle (GET /v1/chain/:chainId/checkpoint/witnessed's answer saved as is, docs/contract.md
 * §18) checked offline: the chain checkpoint and the log checkpoint are signed by the service's key,
 * the log checkpoint carries at least `quorum` valid cosignatures of the given witness keys, and the
 * chain checkpoint's note is a leaf of the log checkpoint's tree (RFC 9162 inclusion, leaf data the
 * note's UTF-8 bytes). Only the keys are trusted; the bundle's `witnesses` count is not read.
 */

export interface WitnessedBundle {
  checkpoint: string;
  logCheckpoint: string;
  leafIndex: number;
  proof: string[];
}

export type BundleCheck =
  | { ok: true; checkpoint: ChainCheckpoint; logSize: number; cosigners: string[] }
  | { ok: false; kind: 'tampered' | 'unconfirmed'; message: string };

/** The bundle's shape (`{ data: { … } }` or the data alone); anything else is bad input. */
export function readWitnessedBundle(file: unknown, label: string): WitnessedBundle {
  const data = isObject(file) && isObject(file.data) ? file.data : file;
  if (
    !isObject(data) ||
    typeof data.checkpoint !== 'string' ||
    typeof data.logCheckpoint !== 'string' ||
    typeof data.leafIndex !== 'number' ||
    !Number.isSafeInteger(data.leafIndex) ||
    data.leafIndex < 0 ||
    !Array.isArray(data.proof) ||
    !data.proof.every((h): h is string => typeof h === 'string' && HEX_HASH.test(h))
  )
    throw new InputError(
      `${label}: not a witnessed bundle (GET /v1/chain/:chainId/checkpoint/witnessed: checkpoint, logCheckpoint, leafIndex, proof)`,
    );
  return {
    checkpoint: data.checkpoint,
    logCheckpoint: data.logCheckpoint,
    leafIndex: data.leafIndex,
    proof: data.proof,
  };
}

export function checkWitnessedBundle(
  bundle: WitnessedBundle,
  logVerifiers: readonly NoteVerifier[],
  witnesses: readonly NoteVerifier[],
  quorum: number,
): BundleCheck {
  const chain = verifyChainCheckpoint(bundle.checkpoint, logVerifiers);
  if (!chain.ok) return refused(chain.reason, `its chain checkpoint: ${chain.message}`);
  const log = verifyNote(bundle.logCheckpoint, logVerifiers);
  if (!log.ok) return refused(log.reason, `its log checkpoint: ${log.message}`);
  let size: number;
  let root: Buffer;
  try {
    ({ size, hash: root } = parseCheckpoint(log.text));
  } catch (error) {
    return { ok: false, kind: 'tampered', message: `its log checkpoint is not a checkpoint: ${String(error)}` };
  }
  const cosigners = verifiedCosignatures(bundle.logCheckpoint, witnesses).map((c) => c.witness);
  if (cosigners.length < quorum)
    return {
      ok: false,
      kind: 'unconfirmed',
      message: `its log checkpoint carries ${cosigners.length} valid cosignature(s) of the given witnesses, fewer than ${quorum}`,
    };
  const leaf = leafHash(Buffer.from(bundle.checkpoint, 'utf8'));
  const proof = bundle.proof.map((h) => Buffer.from(h, 'hex'));
  if (!verifyInclusion(bundle.leafIndex, size, leaf, proof, root))
    return {
      ok: false,
      kind: 'tampered',
      message: `its chain checkpoint is not leaf ${bundle.leafIndex} of the log checkpoint's tree of size ${size}`,
    };
  return { ok: true, checkpoint: chain.checkpoint, logSize: size, cosigners };
}

function refused(reason: 'malformed' | 'bad-signature' | 'no-known-signature', message: string): BundleCheck {
  return { ok: false, kind: reason === 'no-known-signature' ? 'unconfirmed' : 'tampered', message };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
