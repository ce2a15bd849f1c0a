import {
  ChainCheckpoint,
  eventLeafHash,
  NoteVerifier,
  rootFromInclusionProof,
  verifyChainCheckpoint,
  verifyConsistency,
} from '@app/hashing';
import { InputError } from '../verify-export/export-document';
import { CheckpointInput } from '../verify-export/verify-export';
import { ConsistencyProofFile, InclusionProofFile } from './proof-files';

/*
 * Offline checks of the service's Merkle proofs (contract §10) against checkpoints it signed: the
 * only thing trusted is the verifier key. The roots compared are those of the signed checkpoints,
 * never the roots the proof file itself names (those are only reported when they differ).
 */

export type ProofOutcome = 'verified' | 'tampered' | 'unconfirmed';

export interface ProofReport {
  outcome: ProofOutcome;
  /** What was checked, for people; the verdict is the last line. */
  lines: string[];
}

class Report {
  readonly lines: string[] = [];
  private outcome: ProofOutcome = 'verified';

  note(line: string): void {
    this.lines.push(line);
  }

  finding(kind: Exclude<ProofOutcome, 'verified'>, message: string): void {
    if (kind === 'tampered' || this.outcome === 'verified') this.outcome = kind;
    this.lines.push(`${kind === 'tampered' ? 'TAMPERING FOUND' : 'NOT CONFIRMED'}: ${message}`);
  }

  done(verified: string): ProofReport {
    const verdict = {
      verified: `RESULT: VERIFIED: ${verified}`,
      tampered: 'RESULT: TAMPERING FOUND.',
      unconfirmed: 'RESULT: NOT VERIFIED: no contradiction found, but the proof could not be confirmed (see above).',
    }[this.outcome];
    return { outcome: this.outcome, lines: [...this.lines, verdict] };
  }
}

/** Opens a checkpoint with the given keys; a malformed one is bad input, a bad or unknown signature a finding. */
function openCheckpoint(
  input: CheckpointInput,
  verifiers: readonly NoteVerifier[],
  report: Report,
): ChainCheckpoint | null {
  const opened = verifyChainCheckpoint(input.note, verifiers);
  if (opened.ok) {
    const { chainId, size, hash } = opened.checkpoint;
    report.note(
      `Checkpoint ${input.label}: chain ${chainId}, size ${size}, root ${hash}, signed by ${opened.verifiedBy.join(', ')}`,
    );
    return opened.checkpoint;
  }
  if (opened.reason === 'malformed')
    throw new InputError(`${input.label}: not a checkpoint of this service: ${opened.message}`);
  if (opened.reason === 'bad-signature')
    report.finding('tampered', `checkpoint ${input.label}: ${opened.message}: the checkpoint was altered or forged`);
  else
    report.finding(
      'unconfirmed',
      `checkpoint ${input.label}: ${opened.message}: it is not signed by the given key (check --key against GET /v1/checkpoint-key)`,
    );
  return null;
}

const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex');

/** `verify-proof`: does the inclusion proof lead from the event's hash to the signed root? */
export function checkInclusionProof(
  proof: InclusionProofFile,
  checkpoint: CheckpointInput,
  verifiers: readonly NoteVerifier[],
): ProofReport {
  const report = new Report();
  report.note(
    `Inclusion proof: chain ${proof.chainId}, event hash ${proof.eventHash} at position ${proof.position} (leaf ${proof.leafIndex}), tree size ${proof.size}, ${proof.proof.length} hash(es)`,
  );
  const cp = openCheckpoint(checkpoint, verifiers, report);
  if (cp && sameTree(cp, proof.chainId, proof.size, report)) {
    if (proof.rootHash !== cp.hash)
      report.finding(
        'tampered',
        `the proof names root ${proof.rootHash} for size ${proof.size}, but the checkpoint signed ${cp.hash}: two different trees of one size`,
      );
    const root = rootFromInclusionProof(
      proof.leafIndex,
      proof.size,
      eventLeafHash(proof.eventHash),
      proof.proof.map(bytes),
    );
    if (root === null || root.toString('hex') !== cp.hash)
      report.finding(
        'tampered',
        `the proof does not lead to the signed root: the event with hash ${proof.eventHash} is not at position ${proof.position} of the tree the checkpoint signed` +
          ` (or the proof file was altered)`,
      );
  }
  return report.done(
    `the event with hash ${proof.eventHash} is at position ${proof.position} of the chain the checkpoint signed at size ${proof.size}.`,
  );
}

/** `verify-consistency`: is the newer signed tree an extension of the older one? */
export function checkConsistencyProof(
  proof: ConsistencyProofFile,
  older: CheckpointInput,
  newer: CheckpointInput,
  verifiers: readonly NoteVerifier[],
): ProofReport {
  const report = new Report();
  report.note(
    `Consistency proof: chain ${proof.chainId}, from size ${proof.from} to ${proof.to}, ${proof.proof.length} hash(es)`,
  );
  const [a, b] = [openCheckpoint(older, verifiers, report), openCheckpoint(newer, verifiers, report)];
  if (a && b && a.size > b.size)
    throw new InputError(`--old has size ${a.size}, larger than --new's ${b.size}: give the older checkpoint as --old`);
  if (a && b && sameTree(a, proof.chainId, proof.from, report) && sameTree(b, proof.chainId, proof.to, report)) {
    for (const [name, named, signed] of [
      ['fromRoot', proof.fromRoot, a],
      ['toRoot', proof.toRoot, b],
    ] as const)
      if (named !== signed.hash)
        report.finding(
          'tampered',
          `the proof's ${name} ${named} is not the root signed at size ${signed.size} (${signed.hash})`,
        );
    if (!verifyConsistency(proof.from, proof.to, bytes(a.hash), bytes(b.hash), proof.proof.map(bytes)))
      report.finding(
        'tampered',
        `the tree signed at size ${b.size} does not extend the tree signed at size ${a.size}: the chain's history was rewritten between the two checkpoints` +
          ` (or the proof file was altered)`,
      );
  }
  return report.done(
    `the chain signed at size ${proof.to} extends the chain signed at size ${proof.from}: it only grew.`,
  );
}

/** Is the checkpoint of the chain and size the proof was made for? Otherwise nothing can be confirmed. */
function sameTree(cp: ChainCheckpoint, chainId: string, size: number, report: Report): boolean {
  if (cp.chainId !== chainId) {
    report.finding('unconfirmed', `the checkpoint is of chain ${cp.chainId}, the proof of chain ${chainId}`);
    return false;
  }
  if (cp.size !== size) {
    report.finding(
      'unconfirmed',
      `the checkpoint is of size ${cp.size}, the proof was made for size ${size}: ask the service for the proof at the checkpoint's size`,
    );
    return false;
  }
  return true;
}
