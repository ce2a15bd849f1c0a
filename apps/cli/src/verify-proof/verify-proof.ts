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
import { checkWitnessedBundle, WitnessedBundle } from './witnessed-bundle';

/*
 * Offline checks of the service's Merkle proofs (docs/contract.md §10) against checkpoints it signed: the
 * only thing trusted is the verifier key. The roots compared are those of the signed checkpoints;
 * where no usable checkpoint stands for a size, the proof is held against the root its own file
 * names, which shows only that the file agrees with itself: NOT CONFIRMED, or with
 * --internal-only, CONSISTENT (docs/contract.md §10: only a signature confirms).
 */

/** `consistent`: with --internal-only, the proof agrees with the roots its file names; nothing signed was checked. */
export type ProofOutcome = 'verified' | 'consistent' | 'tampered' | 'unconfirmed';

export interface ProofReport {
  outcome: ProofOutcome;
  /** What was checked, for people; the verdict is the last line. */
  lines: string[];
}

export interface ProofSettings {
  /** No checkpoint: the proof against the roots its file names, and no finding for the missing signature. */
  internalOnly?: boolean;
  /** --witness/--quorum/--witnessed (docs/contract.md §18): the confirming checkpoint must also be witnessed. */
  witnessed?: WitnessedDemand;
}

export interface WitnessedDemand {
  label: string;
  bundle: WitnessedBundle;
  witnesses: readonly NoteVerifier[];
  quorum: number;
}

class Report {
  readonly lines: string[] = [];
  private outcome: ProofOutcome = 'verified';

  constructor(readonly internalOnly: boolean) {}

  note(line: string): void {
    this.lines.push(line);
  }

  finding(kind: 'tampered' | 'unconfirmed', message: string): void {
    if (kind === 'tampered' || this.outcome === 'verified') this.outcome = kind;
    this.lines.push(`${kind === 'tampered' ? 'TAMPERING FOUND' : 'NOT CONFIRMED'}: ${message}`);
  }

  done(verified: string, consistent: string): ProofReport {
    const outcome = this.outcome === 'verified' && this.internalOnly ? 'consistent' : this.outcome;
    const verdict = {
      verified: `RESULT: VERIFIED: ${verified}`,
      consistent: `RESULT: CONSISTENT: ${consistent} No signature was checked (--internal-only): this does not show that the service signed that root.`,
      tampered: 'RESULT: TAMPERING FOUND.',
      unconfirmed:
        'RESULT: NOT CONFIRMED: no contradiction found, but the proof is not confirmed by a signed checkpoint (see above).',
    }[outcome];
    return { outcome, lines: [...this.lines, verdict] };
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

/** The root a proof is held against at one size: the signed one, or (not confirmed) the one its file names. */
interface HeldRoot {
  hash: string;
  signed: boolean;
}

interface RootClaim {
  chainId: string;
  size: number;
  /** The root the proof file names for this size, and the member that names it. */
  named: string;
  member: string;
  /** The option that gives the checkpoint of this size. */
  option: string;
}

/**
 * `given`: whether a checkpoint was given for this size; `cp`: it, opened (null when its signature
 * was not accepted: already reported).
 */
function holdRoot(claim: RootClaim, given: boolean, cp: ChainCheckpoint | null, report: Report): HeldRoot {
  if (!given) {
    if (!report.internalOnly)
      report.finding(
        'unconfirmed',
        `no checkpoint was given (${claim.option} and --key): the proof's ${claim.member} ${claim.named} for size ${claim.size} is signed by nobody here, and anyone can write a proof that agrees with its own root`,
      );
    return { hash: claim.named, signed: false };
  }
  if (!cp || !sameTree(cp, claim.chainId, claim.size, report)) return { hash: claim.named, signed: false };
  if (claim.named !== cp.hash)
    report.finding(
      'tampered',
      `the proof names ${claim.member} ${claim.named} for size ${claim.size}, but the checkpoint signed ${cp.hash}: two different trees of one size`,
    );
  return { hash: cp.hash, signed: true };
}

/** The confirming checkpoint must be the one a witnessed bundle shows cosigned by a quorum of the given witnesses. */
function holdWitnessed(
  cp: ChainCheckpoint,
  demand: WitnessedDemand,
  verifiers: readonly NoteVerifier[],
  report: Report,
): void {
  const checked = checkWitnessedBundle(demand.bundle, verifiers, demand.witnesses, demand.quorum);
  if (!checked.ok) return report.finding(checked.kind, `witnessed bundle ${demand.label}: ${checked.message}`);
  const { chainId, size, hash } = checked.checkpoint;
  if (chainId !== cp.chainId || size !== cp.size || hash !== cp.hash)
    return report.finding(
      'unconfirmed',
      `witnessed bundle ${demand.label} is of chain ${chainId} at size ${size} (root ${hash}), not of the checkpoint given: the checkpoint is not shown witnessed`,
    );
  report.note(
    `Witnessed by ${checked.cosigners.length} of ${demand.witnesses.length} given witness(es) (${checked.cosigners.join(', ')}; at least ${demand.quorum} asked): leaf ${demand.bundle.leafIndex} of the checkpoint log at size ${checked.logSize}`,
  );
}

const bytes = (hex: string): Buffer => Buffer.from(hex, 'hex');

/** `verify-proof`: does the inclusion proof lead from the event's hash to the signed root? */
export function checkInclusionProof(
  proof: InclusionProofFile,
  checkpoint: CheckpointInput | null,
  verifiers: readonly NoteVerifier[],
  settings: ProofSettings = {},
): ProofReport {
  const report = new Report(settings.internalOnly === true);
  report.note(
    `Inclusion proof: chain ${proof.chainId}, event hash ${proof.eventHash} at position ${proof.position} (leaf ${proof.leafIndex}), tree size ${proof.size}, ${proof.proof.length} hash(es)`,
  );
  const cp = checkpoint && openCheckpoint(checkpoint, verifiers, report);
  const claim = { chainId: proof.chainId, size: proof.size, named: proof.rootHash, member: 'rootHash' };
  const target = holdRoot({ ...claim, option: '--checkpoint' }, checkpoint !== null, cp, report);
  if (settings.witnessed && cp && target.signed) holdWitnessed(cp, settings.witnessed, verifiers, report);
  const root = rootFromInclusionProof(
    proof.leafIndex,
    proof.size,
    eventLeafHash(proof.eventHash),
    proof.proof.map(bytes),
  );
  if (root === null || root.toString('hex') !== target.hash)
    report.finding(
      'tampered',
      target.signed
        ? `the proof does not lead to the signed root: the event with hash ${proof.eventHash} is not at position ${proof.position} of the tree the checkpoint signed` +
            ` (or the proof file was altered)`
        : `the proof does not lead from the event's hash to the rootHash its own file names: the proof file was altered`,
    );
  return report.done(
    `the event with hash ${proof.eventHash} is at position ${proof.position} of the chain the checkpoint signed at size ${proof.size}.`,
    `the proof leads from the event's hash at position ${proof.position} to the rootHash its file names for size ${proof.size}.`,
  );
}

/** `verify-consistency`: is the newer signed tree an extension of the older one? */
export function checkConsistencyProof(
  proof: ConsistencyProofFile,
  older: CheckpointInput | null,
  newer: CheckpointInput | null,
  verifiers: readonly NoteVerifier[],
  settings: ProofSettings = {},
): ProofReport {
  const report = new Report(settings.internalOnly === true);
  report.note(
    `Consistency proof: chain ${proof.chainId}, from size ${proof.from} to ${proof.to}, ${proof.proof.length} hash(es)`,
  );
  const [a, b] = [older && openCheckpoint(older, verifiers, report), newer && openCheckpoint(newer, verifiers, report)];
  if (a && b && a.size > b.size)
    throw new InputError(`--old has size ${a.size}, larger than --new's ${b.size}: give the older checkpoint as --old`);
  const chainId = proof.chainId;
  const from = holdRoot(
    { chainId, size: proof.from, named: proof.fromRoot, member: 'fromRoot', option: '--old' },
    older !== null,
    a,
    report,
  );
  const to = holdRoot(
    { chainId, size: proof.to, named: proof.toRoot, member: 'toRoot', option: '--new' },
    newer !== null,
    b,
    report,
  );
  if (!verifyConsistency(proof.from, proof.to, bytes(from.hash), bytes(to.hash), proof.proof.map(bytes)))
    report.finding(
      'tampered',
      from.signed && to.signed
        ? `the tree signed at size ${proof.to} does not extend the tree signed at size ${proof.from}: the chain's history was rewritten between the two checkpoints` +
            ` (or the proof file was altered)`
        : `the proof does not show that the tree of size ${proof.to} (${whose(to)}) extends the tree of size ${proof.from} (${whose(from)}): ` +
            `the history was rewritten, or the proof file was altered`,
    );
  return report.done(
    `the chain signed at size ${proof.to} extends the chain signed at size ${proof.from}: it only grew.`,
    `the proof shows that the tree with the toRoot its file names for size ${proof.to} extends the one with its fromRoot for size ${proof.from}.`,
  );
}

const whose = (root: HeldRoot): string => (root.signed ? 'the signed root' : 'the root the proof file names');

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
