import {
  ChainCheckpoint,
  computeEventHash,
  emptyRoot,
  leafHash,
  merkleRoot,
  NoteVerifier,
  verifyChainCheckpoint,
} from '@app/hashing';
import { CheckedEvent, hashFailure, linkFailure, repeatedPositionFailure, timestampFailure } from '@app/verification';
import { ExportDocument, ExportedEvent, InputError } from './export-document';

/** `tampered`: the data contradicts itself or a signed checkpoint. `unconfirmed`: a check could not be made. */
export type FindingKind = 'tampered' | 'unconfirmed';

export interface Finding {
  kind: FindingKind;
  chainId: string | null;
  position: number | null;
  eventId: string | null;
  message: string;
}

export interface ChainSummary {
  chainId: string;
  name: string;
  events: number;
  /** Contiguous position ranges present in the export. */
  runs: [number, number][];
  hashesRecomputed: number;
  linksChecked: number;
}

export interface CheckpointSummary {
  label: string;
  status: 'confirmed' | FindingKind;
  checkpoint: ChainCheckpoint | null;
  signedBy: string[];
  message: string;
}

export interface ExportReport {
  outcome: 'verified' | FindingKind;
  events: number;
  complete: boolean;
  chains: ChainSummary[];
  checkpoints: CheckpointSummary[];
  findings: Finding[];
}

export interface CheckpointInput {
  label: string;
  note: string | Uint8Array;
}

/**
 * Re-hashes every event, checks the links inside each contiguous run of each chain and holds the
 * export against each checkpoint (after checking its signature). No network, no service code
 * besides the hashing library.
 */
export function verifyExport(
  doc: ExportDocument,
  checkpoints: readonly CheckpointInput[],
  verifiers: readonly NoteVerifier[],
): ExportReport {
  const findings: Finding[] = [];
  const complete = isComplete(doc);
  if (doc.count !== null && doc.count !== doc.events.length) {
    findings.push(
      finding(
        'tampered',
        null,
        null,
        null,
        `the export header says ${doc.count} events but the file holds ${doc.events.length}`,
      ),
    );
  }
  findDuplicateIds(doc.events, findings);
  const chains = groupByChain(doc.events);
  const summaries = [...chains.entries()].map(([chainId, events]) => verifyChain(chainId, events, complete, findings));
  const checked = checkpoints.map((input) => checkCheckpoint(input, verifiers, chains, findings));
  findForks(checked, findings);
  const outcome = findings.some((f) => f.kind === 'tampered')
    ? 'tampered'
    : findings.length > 0
      ? 'unconfirmed'
      : 'verified';
  return { outcome, events: doc.events.length, complete, chains: summaries, checkpoints: checked, findings };
}

/** Unfiltered (besides chain and period): a position missing between two exported ones was removed. */
function isComplete(doc: ExportDocument): boolean {
  const f = doc.filters;
  return f !== null && f.actor == null && f.action == null && f.resource == null;
}

function finding(
  kind: FindingKind,
  chainId: string | null,
  position: number | null,
  eventId: string | null,
  message: string,
): Finding {
  return { kind, chainId, position, eventId, message };
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

function verifyChain(chainId: string, events: ExportedEvent[], complete: boolean, findings: Finding[]): ChainSummary {
  const summary: ChainSummary = {
    chainId,
    name: events[0]?.chain.name ?? '',
    events: events.length,
    runs: [],
    hashesRecomputed: 0,
    linksChecked: 0,
  };
  const fail = (e: ExportedEvent, message: string): void =>
    void findings.push(finding('tampered', chainId, e.chain.position, e.id, message));
  let previous: ExportedEvent | null = null;
  for (const e of events) {
    const position = e.chain.position;
    const checked: CheckedEvent = { ...e, position };
    const report = (message: string | null): void => void (message && fail(e, message));
    const computed = computeEventHash({ ...e, chainId, position });
    summary.hashesRecomputed++;
    report(hashFailure(e, computed));
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
      }
      if (previous && complete) {
        const from = previous.chain.position + 1;
        fail(
          e,
          `${from === position - 1 ? `position ${from} is` : `positions ${from}–${position - 1} are`} missing from an unfiltered export that holds the events around them: removed`,
        );
      }
    }
    previous = e;
  }
  return summary;
}

function checkCheckpoint(
  input: CheckpointInput,
  verifiers: readonly NoteVerifier[],
  chains: Map<string, ExportedEvent[]>,
  findings: Finding[],
): CheckpointSummary {
  const opened = verifyChainCheckpoint(input.note, verifiers);
  if (!opened.ok) {
    if (opened.reason === 'malformed')
      throw new InputError(`${input.label}: not a checkpoint of this service: ${opened.message}`);
    const kind: FindingKind = opened.reason === 'bad-signature' ? 'tampered' : 'unconfirmed';
    const message =
      opened.reason === 'bad-signature'
        ? `${opened.message}: the checkpoint was altered or forged`
        : `${opened.message}: it is not signed by the given key (check --key against GET /v1/checkpoint-key)`;
    findings.push(finding(kind, null, null, null, `checkpoint ${input.label}: ${message}`));
    return { label: input.label, status: kind, checkpoint: null, signedBy: [], message };
  }
  const { checkpoint, verifiedBy } = opened;
  const [status, message] = holdAgainst(checkpoint, chains.get(checkpoint.chainId) ?? []);
  if (status !== 'confirmed')
    findings.push(finding(status, checkpoint.chainId, checkpoint.size, null, `checkpoint ${input.label}: ${message}`));
  return { label: input.label, status, checkpoint, signedBy: verifiedBy, message };
}

/**
 * Does the export agree with "the chain's first `size` events have Merkle root `hash`" (contract
 * §10)? Only an export holding positions 1…size can say: the root is recomputed from their hashes.
 */
function holdAgainst(cp: ChainCheckpoint, events: readonly ExportedEvent[]): ['confirmed' | FindingKind, string] {
  if (cp.size === 0)
    return cp.hash === emptyRoot().toString('hex')
      ? ['confirmed', "an empty chain: the signed root is the empty tree's"]
      : ['tampered', `the checkpoint of size 0 signed ${cp.hash}, not the empty tree's root`];
  if (events.length === 0)
    return ['unconfirmed', `the export holds no event of chain ${cp.chainId}, so it cannot confirm this checkpoint`];
  const first = events[0]!.chain.position;
  if (first !== 1)
    return [
      'unconfirmed',
      `the export starts at position ${first}, not 1, so the Merkle root of the first ${cp.size} events cannot be recomputed (export the chain from its start)`,
    ];
  const prefix = events.filter((e) => e.chain.position <= cp.size);
  const last = events[events.length - 1]!.chain.position;
  if (last < cp.size || prefix.length !== cp.size || prefix.some((e, i) => e.chain.position !== i + 1)) {
    return [
      'unconfirmed',
      last < cp.size
        ? `the export ends at position ${last}, below the checkpoint's size ${cp.size}, so it cannot confirm it: either the export's period ends before ` +
          `event ${cp.size} was appended (export a later period), or events ${last + 1}–${cp.size} were removed after the checkpoint was signed`
        : `the export does not hold every position 1–${cp.size} exactly once (a filtered export?), so it cannot recompute the checkpoint's Merkle root`,
    ];
  }
  const root = merkleRoot(prefix.map((e) => leafHash(Buffer.from(e.hash, 'hex')))).toString('hex');
  return root === cp.hash
    ? [
        'confirmed',
        `the Merkle root of the exported events 1–${cp.size} is the signed root: the export up to it is exactly what was signed`,
      ]
    : [
        'tampered',
        `the Merkle root of the exported events 1–${cp.size} is ${root}, but the checkpoint signed ${cp.hash}: the chain was rewritten after the checkpoint`,
      ];
}

/** Two valid checkpoints of one chain and size with different hashes: the service forked the chain. */
function findForks(checked: readonly CheckpointSummary[], findings: Finding[]): void {
  const seen = new Map<string, string>();
  for (const { checkpoint } of checked) {
    if (!checkpoint) continue;
    const key = `${checkpoint.chainId}/${checkpoint.size}`;
    const hash = seen.get(key);
    if (hash !== undefined && hash !== checkpoint.hash) {
      findings.push(
        finding(
          'tampered',
          checkpoint.chainId,
          checkpoint.size,
          null,
          `two signed checkpoints of size ${checkpoint.size} name different roots (${hash}, ${checkpoint.hash}): the service showed two histories`,
        ),
      );
    }
    seen.set(key, checkpoint.hash);
  }
}
