import { existsSync, readFileSync, statSync } from 'node:fs';
import { NoteFormatError, NoteVerifier, parseVerifierKey } from '@app/hashing';
import { Io, printable } from '../io';
import { ExitCode } from '../exit-code';
import { InputError, readExportDocument } from './export-document';
import { formatReport } from './report';
import { CheckpointInput, verifyExport } from './verify-export';
import { readWitnessedBundle, readWitnessKeys, WitnessingDemand } from '../verify-proof/witnessed-bundle';

/** A witnessed bundle is two notes and a proof: a few KiB. */
const MAX_PROOF_BYTES = 1024 * 1024;

const MAX_EXPORT_BYTES = 1024 * 1024 * 1024;
export const MAX_CHECKPOINT_BYTES = 64 * 1024;

export interface VerifyExportOptions {
  exportPath: string;
  checkpointPaths: string[];
  keys: string[];
  /** The file's own consistency alone: exit 0 when it agrees with itself, no signature checked. */
  internalOnly?: boolean;
  /** --witness keys, --quorum, --witnessed bundles (docs/contract.md §18). */
  witnesses?: string[];
  quorum?: string;
  witnessedPaths?: string[];
}

/**
 * `verify-export <export.json> [--checkpoint <file>]… [--key <verifier key or file>]…` or
 * `verify-export <export.json> --internal-only`. Exit 0 only for VERIFIED (every event confirmed
 * by a signed checkpoint) or, with --internal-only, CONSISTENT.
 */
export function verifyExportCommand(options: VerifyExportOptions, io: Io): ExitCode {
  try {
    if (options.internalOnly && (options.checkpointPaths.length > 0 || options.keys.length > 0))
      throw new InputError('--internal-only checks no signature: give it without --checkpoint and --key');
    if (options.checkpointPaths.length > 0 && options.keys.length === 0) {
      throw new InputError('--checkpoint needs --key: the verifier key of the service (GET /v1/checkpoint-key)');
    }
    const verifiers = options.keys.map(readVerifierKey);
    const doc = readExportDocument(parseJson(readBounded(options.exportPath, MAX_EXPORT_BYTES), options.exportPath));
    const checkpoints: CheckpointInput[] = options.checkpointPaths.map((path) => ({
      label: path,
      note: readBounded(path, MAX_CHECKPOINT_BYTES),
    }));
    const witnessing = readWitnessing(options);
    const report = verifyExport(doc, checkpoints, verifiers, { internalOnly: options.internalOnly, witnessing });
    io.out(formatReport(options.exportPath, report));
    return report.outcome === 'verified' || report.outcome === 'consistent' ? ExitCode.Ok : ExitCode.Failed;
  } catch (error) {
    if (error instanceof InputError) {
      io.err(`verify-export: ${printable(error.message)}\n`);
      return ExitCode.BadInput;
    }
    throw error;
  }
}

/** --witness and --witnessed together (with --checkpoint), --quorum only with them; or none. */
function readWitnessing(options: VerifyExportOptions): WitnessingDemand | undefined {
  const keys = options.witnesses ?? [];
  const paths = options.witnessedPaths ?? [];
  if (keys.length === 0 && paths.length === 0 && options.quorum === undefined) return undefined;
  if (keys.length === 0 || paths.length === 0)
    throw new InputError('--witness, --quorum and --witnessed go together: the witness keys and the witnessed bundles');
  if (options.checkpointPaths.length === 0)
    throw new InputError('--witnessed needs --checkpoint and --key: the checkpoints it shows witnessed');
  const { witnesses, quorum } = readWitnessKeys(keys, options.quorum);
  const bundles = paths.map((path) => ({
    label: path,
    bundle: readWitnessedBundle(parseJson(readBounded(path, MAX_PROOF_BYTES), path), path),
  }));
  return { witnesses, quorum, bundles };
}

/** A verifier key given inline, or the path of a file holding one. */
export function readVerifierKey(value: string): NoteVerifier {
  try {
    return parseVerifierKey(value);
  } catch (error) {
    if (!(error instanceof NoteFormatError)) throw error;
    if (!existsSync(value)) throw new InputError(`--key: ${error.message}`);
  }
  try {
    return parseVerifierKey(readBounded(value, MAX_CHECKPOINT_BYTES).toString('utf8'));
  } catch (error) {
    if (error instanceof NoteFormatError) throw new InputError(`--key ${value}: ${error.message}`);
    throw error;
  }
}

export function readBounded(path: string, maxBytes: number): Buffer {
  try {
    if (statSync(path).size > maxBytes) throw new InputError(`${path} is larger than ${maxBytes} bytes`);
    return readFileSync(path);
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
}

export function parseJson(bytes: Buffer, path: string): unknown {
  try {
    return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
  } catch (error) {
    throw new InputError(`${path} is not UTF-8 JSON: ${(error as Error).message}`);
  }
}
