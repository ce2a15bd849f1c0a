import { NoteVerifier, verifyChainCheckpoint } from '@app/hashing';
import type { StoredCheckpoint } from './audited-event';

/** One prune as the database's retention log recorded it (docs/contract.md §14). */
export interface RecordedPrune {
  firstPosition: number;
  lastPosition: number;
  /** The smallest stored checkpoint that covered the last pruned position when it was pruned; null: none did. */
  checkpointSize: number | null;
}

/** An error of the prune record: where, and what. */
export interface PruneRecordFailure {
  position: number;
  message: string;
}

const range = (from: number, to: number): string => (from === to ? `position ${from}` : `positions ${from}–${to}`);

/**
 * Whether the chain's missing prefix, positions 1…`prunedThrough`, is explained by the prunes the
 * database recorded (retention_log, kept by the owner's triggers whoever deletes): they must tile
 * it exactly, and each must have been covered by a checkpoint this service signed (`covering`: the
 * stored checkpoints at the recorded sizes; a role able to insert checkpoints can forge a row, never
 * its signature). Anything else is what a compromised service or database role did outside the
 * retention's path, reported with the positions.
 */
export function pruneRecordFailures(
  chain: { id: string; prunedThrough: number },
  prunes: readonly RecordedPrune[],
  covering: readonly StoredCheckpoint[],
  verifiers: readonly NoteVerifier[],
): PruneRecordFailure[] {
  const failures: PruneRecordFailure[] = [];
  let next = 1;
  for (const prune of [...prunes].sort((a, b) => a.firstPosition - b.firstPosition)) {
    if (prune.firstPosition > next)
      failures.push({ position: next, message: unrecorded(next, prune.firstPosition - 1) });
    next = Math.max(next, prune.lastPosition + 1);
    const failure = unsignedAuthority(chain.id, prune, covering, verifiers);
    if (failure) failures.push({ position: prune.firstPosition, message: failure });
  }
  if (next <= chain.prunedThrough) failures.push({ position: next, message: unrecorded(next, chain.prunedThrough) });
  else if (next > chain.prunedThrough + 1)
    failures.push({
      position: chain.prunedThrough + 1,
      message: `the database's retention log records prunes up to position ${next - 1}, but the chain's first retained position is ${chain.prunedThrough + 1}: the chain's row was rewritten`,
    });
  return failures;
}

function unrecorded(from: number, to: number): string {
  return `the chain starts after ${range(from, to)}, but the database's retention log records no prune of ${from === to ? 'it' : 'them'}: deleted outside the retention's path`;
}

/** Why the checkpoint a prune relied on does not cover it, or null when a validly signed one does. */
function unsignedAuthority(
  chainId: string,
  prune: RecordedPrune,
  covering: readonly StoredCheckpoint[],
  verifiers: readonly NoteVerifier[],
): string | null {
  const pruned = range(prune.firstPosition, prune.lastPosition);
  if (prune.checkpointSize === null) return `the prune of ${pruned} was recorded while no stored checkpoint covered it`;
  const stored = covering.find((c) => c.size === prune.checkpointSize);
  const opened = stored ? verifyChainCheckpoint(stored.note, verifiers) : null;
  if (
    stored &&
    opened?.ok &&
    opened.checkpoint.chainId === chainId &&
    opened.checkpoint.size === stored.size &&
    opened.checkpoint.hash === stored.hash
  )
    return null;
  return `the prune of ${pruned} relied on a stored checkpoint of size ${prune.checkpointSize} that is not validly signed by this service's checkpoint key: it was forged, and no signed checkpoint covered what was pruned`;
}
