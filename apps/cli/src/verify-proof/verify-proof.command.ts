import { ExitCode } from '../exit-code';
import { Io, printable, printableLines } from '../io';
import { InputError } from '../verify-export/export-document';
import { MAX_CHECKPOINT_BYTES, parseJson, readBounded, readVerifierKey } from '../verify-export/verify-export.command';
import { CheckpointInput } from '../verify-export/verify-export';
import { readConsistencyProof, readInclusionProof } from './proof-files';
import { checkConsistencyProof, checkInclusionProof, ProofReport } from './verify-proof';

/** A proof is log2(size) hashes: a few KiB at most. */
const MAX_PROOF_BYTES = 1024 * 1024;

export interface VerifyProofOptions {
  proofPath: string;
  checkpointPath: string;
  key: string;
}

export interface VerifyConsistencyOptions {
  proofPath: string;
  oldPath: string;
  newPath: string;
  key: string;
}

/** `verify-proof <proof.json> --checkpoint <note> --key <verifier key>` */
export function verifyProofCommand(options: VerifyProofOptions, io: Io): ExitCode {
  return reporting('verify-proof', io, () => {
    const verifiers = [readVerifierKey(options.key)];
    const proof = readInclusionProof(readProofFile(options.proofPath));
    return checkInclusionProof(proof, readCheckpoint(options.checkpointPath), verifiers);
  });
}

/** `verify-consistency <proof.json> --old <note> --new <note> --key <verifier key>` */
export function verifyConsistencyCommand(options: VerifyConsistencyOptions, io: Io): ExitCode {
  return reporting('verify-consistency', io, () => {
    const verifiers = [readVerifierKey(options.key)];
    const proof = readConsistencyProof(readProofFile(options.proofPath));
    return checkConsistencyProof(proof, readCheckpoint(options.oldPath), readCheckpoint(options.newPath), verifiers);
  });
}

/** Exit 0 verified, 1 tampering found or not confirmed, 2 bad input (as verify-export). */
function reporting(command: string, io: Io, check: () => ProofReport): ExitCode {
  try {
    const report = check();
    io.out(printableLines(report.lines));
    return report.outcome === 'verified' ? ExitCode.Ok : ExitCode.Failed;
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

function readCheckpoint(path: string): CheckpointInput {
  return { label: path, note: readBounded(path, MAX_CHECKPOINT_BYTES) };
}
