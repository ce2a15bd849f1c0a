import {
  ChainCheckpoint,
  chainCheckpointOrigin,
  HEX_HASH,
  NoteFormatError,
  parseCosignatureVerifierKey,
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

/** --witness keys and --quorum (default: every key), read as the commands take them. */
export function readWitnessKeys(
  keys: readonly string[],
  quorum: string | undefined,
): {
  witnesses: NoteVerifier[];
  quorum: number;
} {
  const witnesses = keys.map((key) => {
    try {
      return parseCosignatureVerifierKey(key);
    } catch (error) {
      if (error instanceof NoteFormatError) throw new InputError(`--witness: ${error.message}`);
      throw error;
    }
  });
  const k = quorum === undefined ? witnesses.length : Number(quorum);
  if (!/^[1-9][0-9]*$/.test(quorum ?? '1') || k > witnesses.length)
    throw new InputError(`--quorum must be an integer from 1 to the number of --witness keys (${witnesses.length})`);
  return { witnesses, quorum: k };
}

/** What a confirming checkpoint must also show: a bundle among `bundles` cosigned by `quorum` of `witnesses`. */
export interface WitnessingDemand {
  witnesses: readonly NoteVerifier[];
  quorum: number;
  bundles: readonly { label: string; bundle: WitnessedBundle }[];
}

/**
 * The bundle among the given ones that shows `cp` witnessed: `ok` with its label, else the most
 * telling failure (a bundle of this checkpoint that fails, before "no bundle of this checkpoint").
 */
export function witnessedBy(
  cp: ChainCheckpoint,
  demand: WitnessingDemand,
  logVerifiers: readonly NoteVerifier[],
):
  | { ok: true; label: string; cosigners: string[]; logSize: number }
  | { ok: false; kind: 'tampered' | 'unconfirmed'; message: string } {
  let failure: { ok: false; kind: 'tampered' | 'unconfirmed'; message: string } | null = null;
  for (const { label, bundle } of demand.bundles) {
    const checked = checkWitnessedBundle(bundle, logVerifiers, demand.witnesses, demand.quorum);
    const same =
      checked.ok &&
      checked.checkpoint.chainId === cp.chainId &&
      checked.checkpoint.size === cp.size &&
      checked.checkpoint.hash === cp.hash;
    if (checked.ok && same) return { ok: true, label, cosigners: checked.cosigners, logSize: checked.logSize };
    if (!checked.ok && bundleNames(bundle, cp))
      failure ??= { ...checked, message: `witnessed bundle ${label}: ${checked.message}` };
  }
  return (
    failure ?? {
      ok: false,
      kind: 'unconfirmed',
      message: `no witnessed bundle given (--witnessed) shows it in a log checkpoint cosigned by at least ${demand.quorum} of the given witnesses`,
    }
  );
}

/** Whether a bundle's chain checkpoint names this checkpoint's chain and size (whatever its signature). */
function bundleNames(bundle: WitnessedBundle, cp: ChainCheckpoint): boolean {
  const lines = bundle.checkpoint.split('\n');
  return lines[0] === chainCheckpointOrigin(cp.chainId) && lines[1] === String(cp.size);
}
