import { ChainCheckpoint } from '@app/hashing';

/** `tampered`: the data contradicts itself or a signed checkpoint. `unconfirmed`: nothing signed vouches for it. */
export type FindingKind = 'tampered' | 'unconfirmed';

export interface Finding {
  kind: FindingKind;
  chainId: string | null;
  position: number | null;
  eventId: string | null;
  message: string;
}

export function finding(
  kind: FindingKind,
  chainId: string | null,
  position: number | null,
  eventId: string | null,
  message: string,
): Finding {
  return { kind, chainId, position, eventId, message };
}

/** Inclusive ranges of positions, ascending. */
export type Ranges = [number, number][];

export interface ChainSummary {
  chainId: string;
  name: string;
  events: number;
  /** Contiguous position ranges present in the export. */
  runs: Ranges;
  hashesRecomputed: number;
  linksChecked: number;
  /** Positions 1…confirmedSize are confirmed by a signed checkpoint whose Merkle root they reproduce (0: none). */
  confirmedSize: number;
  /** The file's positions that no such checkpoint covers (NOT CONFIRMED). Empty with --internal-only. */
  unconfirmed: Ranges;
}

export interface CheckpointSummary {
  label: string;
  status: 'confirmed' | FindingKind;
  checkpoint: ChainCheckpoint | null;
  signedBy: string[];
  message: string;
}

/**
 * `verified`: every event is covered by a confirmed checkpoint and nothing contradicts anything.
 * `consistent` (--internal-only): the file agrees with itself; no signature was checked.
 */
export type ExportOutcome = 'verified' | 'consistent' | FindingKind;

export interface ExportReport {
  outcome: ExportOutcome;
  internalOnly: boolean;
  events: number;
  chains: ChainSummary[];
  checkpoints: CheckpointSummary[];
  findings: Finding[];
}

/** `1–3, 7, 9–12` */
export const formatRanges = (ranges: Ranges): string =>
  ranges.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(', ');

/** Positions `1–3, 7` or position `7`. */
export const positionsText = (ranges: Ranges): string =>
  `${ranges.length === 1 && ranges[0]![0] === ranges[0]![1] ? 'position' : 'positions'} ${formatRanges(ranges)}`;
