import {
  ChainCheckpoint,
  emptyRoot,
  frontierIds,
  leafHash,
  MerkleNode,
  merkleRoot,
  NoteVerifier,
  pushNode,
  rootFromFrontier,
  verifyChainCheckpoint,
} from '@app/hashing';
import { ExportedEvent, ExportedPrunedChain, InputError } from './export-document';
import { CheckpointSummary, Finding, finding, FindingKind } from './findings';

export interface CheckpointInput {
  label: string;
  note: string | Uint8Array;
}

/**
 * Opens a checkpoint with the given keys and holds the file's events of its chain against it. Only
 * a checkpoint whose signature verifies and whose root the events reproduce comes out `confirmed`.
 */
export function checkCheckpoint(
  input: CheckpointInput,
  verifiers: readonly NoteVerifier[],
  chains: Map<string, ExportedEvent[]>,
  pruned: ReadonlyMap<string, ExportedPrunedChain>,
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
  const [status, message] = holdAgainst(
    checkpoint,
    chains.get(checkpoint.chainId) ?? [],
    pruned.get(checkpoint.chainId) ?? null,
  );
  if (status !== 'confirmed')
    findings.push(finding(status, checkpoint.chainId, checkpoint.size, null, `checkpoint ${input.label}: ${message}`));
  return { label: input.label, status, checkpoint, signedBy: verifiedBy, message };
}

/**
 * Does the export agree with "the chain's first `size` events have Merkle root `hash`" (docs/contract.md
 * §10)? Only an export holding positions 1…size can say: the root is recomputed from their hashes.
 * Of a pruned chain (docs/contract.md §14), an export holds positions from the first retained one: the root
 * is then recomputed from the nodes the service kept over the pruned positions before the last one,
 * the last pruned event's hash (the header's, whose leaf comes next), and the exported events, so a
 * matching signed root confirms the events and the kept hash their first link points to.
 */
function holdAgainst(
  cp: ChainCheckpoint,
  events: readonly ExportedEvent[],
  pruned: ExportedPrunedChain | null,
): ['confirmed' | FindingKind, string] {
  if (cp.size === 0)
    return cp.hash === emptyRoot().toString('hex')
      ? ['confirmed', "an empty chain: the signed root is the empty tree's"]
      : ['tampered', `the checkpoint of size 0 signed ${cp.hash}, not the empty tree's root`];
  if (events.length === 0)
    return ['unconfirmed', `the export holds no event of chain ${cp.chainId}, so it cannot confirm this checkpoint`];
  const first = events[0]!.chain.position;
  if (pruned && first === pruned.lastPosition + 1 && cp.size >= pruned.lastPosition)
    return holdPrunedAgainst(cp, events, pruned);
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
        `the Merkle root of the exported events 1–${cp.size} is the signed root: the signature covers these ${cp.size} events' hashes as the file gives them (each event's fields are checked against its hash: a departure is listed below)`,
      ]
    : [
        'tampered',
        `the Merkle root of the exported events 1–${cp.size} is ${root}, but the checkpoint signed ${cp.hash}: the chain was rewritten after the checkpoint`,
      ];
}

function holdPrunedAgainst(
  cp: ChainCheckpoint,
  events: readonly ExportedEvent[],
  pruned: ExportedPrunedChain,
): ['confirmed' | FindingKind, string] {
  const kept = pruned.lastPosition;
  const ids = frontierIds(kept - 1);
  const stack: MerkleNode[] = pruned.nodes.map((n, i) => ({ ...ids[i]!, hash: Buffer.from(n.hash, 'hex') }));
  pushNode(stack, { level: 0, index: kept - 1, hash: leafHash(Buffer.from(pruned.lastHash, 'hex')) });
  const covered = events.filter((e) => e.chain.position <= cp.size);
  const last = events[events.length - 1]!.chain.position;
  if (last < cp.size || covered.some((e, i) => e.chain.position !== kept + 1 + i))
    return [
      'unconfirmed',
      last < cp.size
        ? `the export ends at position ${last}, below the checkpoint's size ${cp.size}, so it cannot confirm it (export a later period, or give an earlier checkpoint)`
        : `the export does not hold every position ${kept + 1}–${cp.size} exactly once (a filtered export?), so it cannot recompute the checkpoint's Merkle root`,
    ];
  for (const e of covered)
    pushNode(stack, { level: 0, index: e.chain.position - 1, hash: leafHash(Buffer.from(e.hash, 'hex')) });
  const root = rootFromFrontier(stack).toString('hex');
  const what =
    cp.size > kept
      ? `the nodes kept over the pruned positions 1–${kept}, the last pruned event's hash and the exported events ${kept + 1}–${cp.size}`
      : `the nodes kept over the pruned positions 1–${kept} and the last pruned event's hash`;
  return root === cp.hash
    ? [
        'confirmed',
        `the Merkle root of ${what} is the signed root: the signature covers these hashes as the file gives them (each event's fields are checked against its hash: a departure is listed below)`,
      ]
    : [
        'tampered',
        `the Merkle root of ${what} is ${root}, but the checkpoint signed ${cp.hash}: the chain, its kept nodes or the kept hash were rewritten after the checkpoint`,
      ];
}

/** Two valid checkpoints of one chain and size with different hashes: the service forked the chain. */
export function findForks(checked: readonly CheckpointSummary[], findings: Finding[]): void {
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
