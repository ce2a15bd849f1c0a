import { computeEventHash, GENESIS_HASH, isLinked } from '@app/hashing';
import { EventEntity } from '@app/database';

export interface EventIntegrity {
  computedHash: string;
  hashMatches: boolean;
  chainIntact: boolean;
  /** One sentence per failure; empty exactly when the hash matches and the link holds. */
  errors: string[];
}

/**
 * Recomputes `event`'s hash from its stored payload and checks its link to `predecessor`, the
 * stored event at position − 1 of the same chain (null when it is missing, or for position 1).
 */
export function checkIntegrity(event: EventEntity, predecessor: Pick<EventEntity, 'hash'> | null): EventIntegrity {
  const computedHash = computeEventHash({ ...event, timestamp: event.timestamp.toISOString() });
  const hashMatches = computedHash === event.hash;
  const chainIntact = isLinked(event, predecessor);
  const errors: string[] = [];
  if (!hashMatches) errors.push(`hash mismatch: stored ${event.hash} computed ${computedHash}`);
  if (!chainIntact) errors.push(linkFailure(event, predecessor));
  return { computedHash, hashMatches, chainIntact, errors };
}

function linkFailure(event: EventEntity, predecessor: Pick<EventEntity, 'hash'> | null): string {
  const previous = event.position - 1;
  if (event.position === 1)
    return `link mismatch: previousHash ${event.previousHash} does not equal the genesis hash ${GENESIS_HASH}`;
  if (!predecessor) return `previous event (position ${previous}) is missing`;
  return `link mismatch: previousHash ${event.previousHash} does not equal the hash of position ${previous} (${predecessor.hash})`;
}
