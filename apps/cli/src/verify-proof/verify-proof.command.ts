import { NoteVerifier } from '@app/hashing';
import { ExitCode } from '../exit-code';
import { Io, printable, printableLines } from '../io';
import { InputError } from '../verify-export/export-document';
import { MAX_CHECKPOINT_BYTES, parseJson, readBounded, readVerifierKey } from '../verify-export/verify-export.command';
import { CheckpointInput } from '../verify-export/verify-export';
import { readConsistencyProof, readInclusionProof } from './proof-files';
import { checkConsistencyProof, checkInclusionProof, ProofReport, WitnessedDemand } from './verify-proof';
import { readWitnessedBundle, readWitnessKeys } from './witnessed-bundle';

/** A proof is log2(size) hashes: a few KiB at most. */
const MAX_PROOF_BYTES = 1024 * 1024;

/** Checkpoint paths are optional: without them nothing is confirmed (exit 1), unless --internal-only asks for less. */
export interface VerifyProofOptions {
  proofPath: string;
  checkpointPath?: string;
  key?: string;
  internalOnly?: boolean;
  /** cosignature/v1 verifier keys (--witness, repeated), the quorum (default: all) and the bundle (docs/contract.md §18). */
  witnesses?: string[];
  quorum?: string;
  witnessedPath?: string;
}

export interface VerifyConsistencyOptions {
  proofPath: string;
  oldPath?: string;
  newPath?: string;
  key?: string;
  internalOnly?: boolean;
}

/** `verify-proof <proof.json> --checkpoint <note> --key <verifier key>`, or `--internal-only` */
export function verifyProofCommand(options: VerifyProofOptions, io: Io): ExitCode {
  return reporting('verify-proof', io, () => {
    const verifiers = readVerifiers(options, [options.checkpointPath], '--checkpoint');
    const proof = readInclusionProof(readProofFile(options.proofPath));
    const settings = { internalOnly: options.internalOnly, witnessed: readWitnessedDemand(options) };
    return checkInclusionProof(proof, readCheckpoint(options.checkpointPath), verifiers, settings);
  });
}

/** `verify-consistency <proof.json> --old <note> --new <note> --key <verifier key>`, or `--internal-only` */
export function verifyConsistencyCommand(options: VerifyConsistencyOptions, io: Io): ExitCode {
  return reporting('verify-consistency', io, () => {
    const verifiers = readVerifiers(options, [options.oldPath, options.newPath], '--old or --new');
    const proof = readConsistencyProof(readProofFile(options.proofPath));
    const [older, newer] = [readCheckpoint(options.oldPath), readCheckpoint(options.newPath)];
    return checkConsistencyProof(proof, older, newer, verifiers, { internalOnly: options.internalOnly });
  });
}

/** --witness, --quorum and --witnessed together (with --checkpoint), or none of them. */
function readWitnessedDemand(options: VerifyProofOptions): WitnessedDemand | undefined {
  const keys = options.witnesses ?? [];
  if (keys.length === 0 && options.witnessedPath === undefined && options.quorum === undefined) return undefined;
  if (keys.length === 0 || options.witnessedPath === undefined)
    throw new InputError('--witness, --quorum and --witnessed go together: the witness keys and the witnessed bundle');
  if (options.checkpointPath === undefined)
    throw new InputError('--witnessed needs --checkpoint and --key: the checkpoint it shows witnessed');
  const { witnesses, quorum } = readWitnessKeys(keys, options.quorum);
  const bundle = readWitnessedBundle(
    parseJson(readBounded(options.witnessedPath, MAX_PROOF_BYTES), options.witnessedPath),
    options.witnessedPath,
  );
  return { label: options.witnessedPath, bundle, witnesses, quorum };
}

/** The key, checked against the other options: a checkpoint needs it, --internal-only takes neither. */
function readVerifiers(
  options: { key?: string; internalOnly?: boolean },
  checkpoints: (string | undefined)[],
  flag: string,
): NoteVerifier[] {
  const anyCheckpoint = checkpoints.some((path) => path !== undefined);
  if (options.internalOnly && (anyCheckpoint || options.key !== undefined))
    throw new InputError(`--internal-only checks no signature: give it without ${flag} and --key`);
  if (anyCheckpoint && options.key === undefined)
    throw new InputError(`${flag} needs --key: the verifier key of the service (GET /v1/checkpoint-key)`);
  return options.key === undefined ? [] : [readVerifierKey(options.key)];
}

/** Exit 0 verified (or consistent, with --internal-only), 1 tampering found or not confirmed, 2 bad input. */
function reporting(command: string, io: Io, check: () => ProofReport): ExitCode {
  try {
    const report = check();
    io.out(printableLines(report.lines));
    return report.outcome === 'verified' || report.outcome === 'consistent' ? ExitCode.Ok : ExitCode.Failed;
  } catch (error) {
    if (error instanceof InputError) {
      io.err(`${command}: ${printable(error.message)}\n`);
      return ExitCode.BadInput;
    }
    throw error;
  }
}

function readProofFile(path: string): unknown {
  return parseJson(readBounded(path, MAX_PROOF_BYTES), path);
}

function readCheckpoint(path: string | undefined): CheckpointInput | null {
  return path === undefined ? null : { label: path, note: readBounded(path, MAX_CHECKPOINT_BYTES) };
}
