import type { StoredStreamPosition } from '@app/database';

/**
 * A snapshot in which no transaction is visible: a window from it holds every event the live tail
 * can read (all but those written before the tail's `txid` column existed, migration 1764600000000).
 */
export const BEFORE_EVERYTHING = '1:1:';

/**
 * Where a destination starts (docs/contract.md §16): `now` (what commits after `snapshot`, the current
 * snapshot), `beginning` (everything retained), or an ISO time (every retained event whose
 * `timestamp` is at or after it: also where a replay from that time starts).
 */
export function startPosition(start: 'now' | 'beginning' | Date, snapshot: string): StoredStreamPosition {
  if (start === 'now') return { since: snapshot, until: null, after: null };
  if (start === 'beginning') return { since: BEFORE_EVERYTHING, until: null, after: null };
  // (timestamp, chain, position) > (start, '', 0): every event at or after `start`.
  return { since: BEFORE_EVERYTHING, until: null, after: { time: start.toISOString(), chainId: '', position: 0 } };
}
