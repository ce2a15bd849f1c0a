import { EventHashPayload, isLinked, recomputeStoredHash, StoredSecrets } from '@app/hashing';
import { erasureRecordFailure, unrecordedErasures } from './erasure-record';

/**
 * How one event is judged against the event before it: the single place that says what is
 * checked and in which words, for GET /v1/events/:id/verify, whole-chain verification and the
 * offline verifier alike. Framework-free: it needs nothing but the hashing library.
 */
export interface CheckedEvent {
  position: number;
  /** The stored hash. */
  hash: string;
  previousHash: string;
  /** ISO 8601 UTC with milliseconds, as hashed. */
  timestamp: string;
}

/** What is needed of the event at position − 1. */
export interface PredecessorFacts {
  hash: string;
  timestamp: string;
}

/** The stored hash differs from the one recomputed from the stored payload. */
export function hashFailure(event: Pick<CheckedEvent, 'hash'>, computedHash: string | null): string | null {
  if (computedHash === null)
    return `its stored values, salts and commitments determine no hash (a value beside its kept commitment, or without its salt, or salts and commitments that are not objects of the right shape): the event was altered`;
  return computedHash === event.hash
    ? null
    : `stored hash ${event.hash} does not match the hash recomputed from the event, ${computedHash}: the event was altered`;
}

/**
 * The event's previousHash is not the genesis hash (position 1) or not its predecessor's hash.
 * `predecessor` is ignored at position 1.
 */
export function linkFailure(event: CheckedEvent, predecessor: Pick<PredecessorFacts, 'hash'> | null): string | null {
  if (event.position === 1) {
    return isLinked(event, null)
      ? null
      : `the first event of a chain must have a previousHash of 64 zeros (the genesis hash), not ${event.previousHash}`;
  }
  if (predecessor === null || isLinked(event, predecessor)) return null;
  return `previousHash ${event.previousHash} does not match the hash of the event at position ${event.position - 1}, ${predecessor.hash}: an event before it was altered, removed or renumbered`;
}

/** Within a chain, timestamps never decrease as positions grow (docs/contract.md §8). */
export function timestampFailure(
  event: CheckedEvent,
  predecessor: Pick<PredecessorFacts, 'timestamp'> | null,
): string | null {
  if (event.position === 1 || predecessor === null || !isEarlier(event.timestamp, predecessor.timestamp)) return null;
  return `timestamp ${event.timestamp} is earlier than ${predecessor.timestamp}, the timestamp of the event at position ${event.position - 1}: timestamps never decrease along a chain`;
}

/** Positions `firstMissing` … `position` − 1 hold no event. */
export function gapFailure(firstMissing: number, position: number): string {
  const missing =
    firstMissing === position - 1
      ? `the event at position ${firstMissing} is`
      : `the events at positions ${firstMissing}–${position - 1} are`;
  return `${missing} missing: the chain has a gap before position ${position}`;
}

export function repeatedPositionFailure(position: number): string {
  return `position ${position} occurs more than once`;
}

export const FOREIGN_EVENT_FAILURE = 'the event belongs to another account than its chain';

/** The link and the time order both hold: the event may follow `predecessor` (its position − 1). */
export function follows(event: CheckedEvent, predecessor: PredecessorFacts): boolean {
  return linkFailure(event, predecessor) === null && timestampFailure(event, predecessor) === null;
}

/**
 * Compares two timestamps in time. The service writes them in one fixed format, where text order
 * is time order; anything else (a hand-edited export) is compared by the instant it names.
 */
function isEarlier(timestamp: string, than: string): boolean {
  if (ISO_MS.test(timestamp) && ISO_MS.test(than)) return timestamp < than;
  const [a, b] = [Date.parse(timestamp), Date.parse(than)];
  return Number.isNaN(a) || Number.isNaN(b) ? timestamp < than : a < b;
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export interface EventJudgement {
  /** Null when the stored fields determine no hash (recomputeStoredHash). */
  computedHash: string | null;
  hashMatches: boolean;
  /** The link to the predecessor (or the genesis hash) holds, and time does not go backwards. */
  chainIntact: boolean;
  /** One sentence per failure; empty exactly when the event is valid: its hash matches, its chain is intact, its erasures recorded. */
  errors: string[];
}

/**
 * Judges one stored event against its stored predecessor (the event at position − 1 of its
 * chain; null when it is missing, or for position 1), and, where the database's erasure record was
 * read (`recordedErasures`), each erased field against it.
 */
export function judgeEvent(
  event: EventHashPayload & StoredSecrets & { hash: string },
  predecessor: PredecessorFacts | null,
  recordedErasures?: readonly string[] | null,
): EventJudgement {
  const computedHash = recomputeStoredHash(event);
  const unrecorded = unrecordedErasures(event.erasure, recordedErasures);
  const hashError = hashFailure(event, computedHash);
  const chainErrors =
    event.position > 1 && predecessor === null
      ? [gapFailure(event.position - 1, event.position)]
      : [linkFailure(event, predecessor), timestampFailure(event, predecessor)].filter((e): e is string => e !== null);
  return {
    computedHash,
    hashMatches: hashError === null,
    chainIntact: chainErrors.length === 0,
    errors: [
      ...(hashError === null ? [] : [hashError]),
      ...chainErrors,
      ...(unrecorded.length > 0 ? [erasureRecordFailure(event.position, unrecorded)] : []),
    ],
  };
}
