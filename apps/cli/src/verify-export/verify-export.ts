import { hashByVersion, HashingV2, NoteVerifier } from '@app/hashing';
import { CheckedEvent, hashFailure, linkFailure, repeatedPositionFailure, timestampFailure } from '@app/verification';
import { witnessedBy, WitnessingDemand } from '../verify-proof/witnessed-bundle';
import { checkCheckpoint, CheckpointInput, findForks } from './checkpoint-checks';
import { ExportDocument, ExportedEvent, ExportedPrunedChain } from './export-document';
import {
  ChainSummary,
  CheckpointSummary,
  ExportOutcome,
  ExportReport,
  Finding,
  finding,
  positionsText,
  Ranges,
} from './findings';

export type { CheckpointInput } from './checkpoint-checks';
export * from './findings';

export interface VerifyExportSettings {
  /** The file's own consistency alone: no checkpoint is held against it and nothing is confirmed. */
  internalOnly?: boolean;
  /** --witness/--quorum/--witnessed (docs/contract.md §18): a checkpoint confirms only when also witnessed. */
  witnessing?: WitnessingDemand;
}

/**
 * Re-hashes every event, checks positions, links and time order inside each chain, holds the
 * export against each checkpoint (after checking its signature) and says which positions no
 * confirmed checkpoint covers (docs/contract.md §10: only a signature confirms). The file's unsigned
 * `export` header decides nothing but the words used for a gap. No network, no service code
 * besides the hashing and verification libraries.
 */
export function verifyExport(
  doc: ExportDocument,
  checkpoints: readonly CheckpointInput[],
  verifiers: readonly NoteVerifier[],
  settings: VerifyExportSettings = {},
): ExportReport {
  const internalOnly = settings.internalOnly === true;
  const findings: Finding[] = [];
  if (doc.count !== null && doc.count !== doc.events.length) {
    const message = `the export header says ${doc.count} events but the file holds ${doc.events.length}`;
    findings.push(finding('tampered', null, null, null, message));
  }
  findDuplicateIds(doc.events, findings);
  const chains = groupByChain(doc.events);
  const claimsUnfiltered = headerClaimsUnfiltered(doc);
  const summaries = [...chains.entries()].map(([id, events]) =>
    verifyChain(id, events, claimsUnfiltered, doc.pruned.get(id) ?? null, doc.hashing, findings),
  );
  const checked = internalOnly
    ? []
    : checkpoints
        .map((input) => checkCheckpoint(input, verifiers, chains, doc.pruned, findings))
        .map((summary) =>
          settings.witnessing ? holdWitnessed(summary, settings.witnessing, verifiers, findings) : summary,
        );
  findForks(checked, findings);
  if (!internalOnly) {
    for (const summary of summaries) findUnconfirmed(summary, checked, checkpoints.length > 0, findings);
    if (doc.events.length === 0 && !checked.some((c) => c.status === 'confirmed'))
      findings.push(finding('unconfirmed', null, null, null, 'the file holds no event and no checkpoint confirms it'));
  }
  const outcome: ExportOutcome = findings.some((f) => f.kind === 'tampered')
    ? 'tampered'
    : findings.length > 0
      ? 'unconfirmed'
      : internalOnly
        ? 'consistent'
        : 'verified';
  return { outcome, internalOnly, events: doc.events.length, chains: summaries, checkpoints: checked, findings };
}

/** The header (unsigned: anyone can edit or delete it) says no filter but chain and period was applied. */
function headerClaimsUnfiltered(doc: ExportDocument): boolean {
  const f = doc.filters;
  return f !== null && f.actor == null && f.action == null && f.resource == null;
}

function findDuplicateIds(events: readonly ExportedEvent[], findings: Finding[]): void {
  const seen = new Set<string>();
  for (const e of events) {
    if (seen.has(e.id))
      findings.push(finding('tampered', e.chain.id, e.chain.position, e.id, `event id ${e.id} occurs more than once`));
    seen.add(e.id);
  }
}

function groupByChain(events: readonly ExportedEvent[]): Map<string, ExportedEvent[]> {
  const chains = new Map<string, ExportedEvent[]>();
  for (const e of events) {
    const list = chains.get(e.chain.id) ?? [];
    list.push(e);
    chains.set(e.chain.id, list);
  }
  for (const list of chains.values()) list.sort((a, b) => a.chain.position - b.chain.position);
  return chains;
}

function verifyChain(
  chainId: string,
  events: ExportedEvent[],
  claimsUnfiltered: boolean,
  pruned: ExportedPrunedChain | null,
  hashing: ReadonlyMap<string, HashingV2>,
  findings: Finding[],
): ChainSummary {
  const summary: ChainSummary = {
    chainId,
    name: events[0]?.chain.name ?? '',
    events: events.length,
    runs: [],
    hashesRecomputed: 0,
    linksChecked: 0,
    confirmedSize: 0,
    unconfirmed: [],
  };
  const fail = (e: ExportedEvent, message: string, kind: Finding['kind'] = 'tampered'): void =>
    void findings.push(finding(kind, chainId, e.chain.position, e.id, message));
  let previous: ExportedEvent | null = null;
  for (const e of events) {
    const position = e.chain.position;
    const checked: CheckedEvent = { ...e, position };
    const report = (message: string | null): void => void (message && fail(e, message));
    summary.hashesRecomputed++;
    report(recomputedHashFailure(e, { ...e, chainId, position }, hashing.get(e.id)));
    if (e.chain.name !== summary.name)
      fail(e, `chain ${chainId} is named both '${summary.name}' and '${e.chain.name}'`);
    if (previous && previous.chain.position === position) {
      fail(e, repeatedPositionFailure(position));
    } else if (previous && previous.chain.position === position - 1) {
      summary.linksChecked++;
      report(linkFailure(checked, previous));
      report(timestampFailure(checked, previous));
      summary.runs[summary.runs.length - 1]![1] = position;
    } else {
      summary.runs.push([position, position]);
      if (position === 1) {
        summary.linksChecked++;
        report(linkFailure(checked, null));
      } else if (!previous && pruned && position === pruned.lastPosition + 1) {
        // A pruned chain's first retained event links to the last pruned one, which the header names
        // (unsigned: a checkpoint confirms it, as the last leaf before this event's, checkpoint-checks.ts).
        const kept = { hash: pruned.lastHash, timestamp: pruned.lastTimestamp };
        summary.linksChecked++;
        report(linkFailure(checked, kept));
        report(timestampFailure(checked, kept));
      }
      if (previous) fail(e, ...gapFinding(previous.chain.position + 1, position, claimsUnfiltered));
    }
    previous = e;
  }
  return summary;
}

/**
 * Positions missing between two the file holds: whatever the header says, the link across them
 * cannot be checked. A header that claims no filter makes the file contradict itself.
 */
function gapFinding(from: number, position: number, claimsUnfiltered: boolean): [string, Finding['kind']] {
  const missing = from === position - 1 ? `position ${from} is` : `positions ${from}–${position - 1} are`;
  return claimsUnfiltered
    ? [`${missing} missing from an unfiltered export that holds the events around them: removed`, 'tampered']
    : [
        `${missing} missing between events the file holds, so the link from position ${position} back to ${from - 1} cannot be checked: ` +
          'a filter leaves positions out, and so does a removal (nothing signed in the file tells them apart)',
        'unconfirmed',
      ];
}

/**
 * Positions 1…S are confirmed when a checkpoint of size S opened with the given key and the file's
 * events reproduced its root; every position of the file above the largest such S is NOT CONFIRMED.
 */
function findUnconfirmed(
  summary: ChainSummary,
  checked: readonly CheckpointSummary[],
  anyGiven: boolean,
  findings: Finding[],
): void {
  for (const c of checked)
    if (c.status === 'confirmed' && c.checkpoint!.chainId === summary.chainId)
      summary.confirmedSize = Math.max(summary.confirmedSize, c.checkpoint!.size);
  summary.unconfirmed = above(summary.runs, summary.confirmedSize);
  if (summary.unconfirmed.length === 0) return;
  const why = !anyGiven
    ? 'no checkpoint was given (--checkpoint and --key), and nothing in the file itself is signed: anyone can write a file that agrees with itself'
    : summary.confirmedSize > 0
      ? `the largest checkpoint of this chain confirmed here has size ${summary.confirmedSize}: nothing signed vouches for what follows (give a later checkpoint)`
      : 'no given checkpoint of this chain has a signature that verifies with the given key and a Merkle root these events reproduce';
  findings.push(
    finding('unconfirmed', summary.chainId, null, null, `${positionsText(summary.unconfirmed)} NOT CONFIRMED: ${why}`),
  );
}

/** The parts of `runs` above `size`. */
function above(runs: Ranges, size: number): Ranges {
  return runs.filter(([, b]) => b > size).map(([a, b]) => [Math.max(a, size + 1), b]);
}

/** The event's hash recomputed by its version's rule: version 2 (docs/contract.md §17) when the header names its hashing. */
function recomputedHashFailure(
  e: ExportedEvent,
  payload: Parameters<typeof hashByVersion>[0],
  hashing: HashingV2 | undefined,
): string | null {
  const computed = hashByVersion(payload, hashing ?? null);
  return computed === null
    ? 'its hashing (export.hashing) does not determine a hash: a value beside its commitment, or one without its salt'
    : hashFailure(e, computed);
}

/** A confirmed checkpoint stays confirmed only with a witnessed bundle of it; otherwise it is reported and confirms nothing. */
function holdWitnessed(
  summary: CheckpointSummary,
  demand: WitnessingDemand,
  verifiers: readonly NoteVerifier[],
  findings: Finding[],
): CheckpointSummary {
  if (summary.status !== 'confirmed' || !summary.checkpoint) return summary;
  const witnessed = witnessedBy(summary.checkpoint, demand, verifiers);
  const { chainId, size } = summary.checkpoint;
  if (witnessed.ok)
    return {
      ...summary,
      message: `${summary.message}; witnessed by ${witnessed.cosigners.length} of ${demand.witnesses.length} given witness(es) (${witnessed.label}: ${witnessed.cosigners.join(', ')})`,
    };
  findings.push(finding(witnessed.kind, chainId, size, null, `checkpoint ${summary.label}: ${witnessed.message}`));
  return { ...summary, status: witnessed.kind, message: witnessed.message };
}
