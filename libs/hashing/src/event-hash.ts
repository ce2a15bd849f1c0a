import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json';

/** previousHash of the first event of every chain. */
export const GENESIS_HASH = '0'.repeat(64);

/** Exactly the members that are hashed (contract §3); nothing more, nothing less. */
export interface EventHashPayload {
  id: string;
  chainId: string;
  position: number;
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
  timestamp: string;
  previousHash: string;
}

/** Picks the hashed members, so that extra fields of a richer object can never leak in. */
export function hashPayloadOf(event: EventHashPayload): EventHashPayload {
  const { id, chainId, position, actor, action, resource, context, timestamp, previousHash } = event;
  return { id, chainId, position, actor, action, resource, context, timestamp, previousHash };
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** hex(SHA-256(UTF-8(JCS(payload)))) */
export function computeEventHash(event: EventHashPayload): string {
  return sha256Hex(canonicalJson(hashPayloadOf(event)));
}

/** The previousHash an event at `position` must carry, given its predecessor's hash. */
export function expectedPreviousHash(position: number, predecessorHash: string | null): string | null {
  return position === 1 ? GENESIS_HASH : predecessorHash;
}

export interface LinkCheck {
  position: number;
  previousHash: string;
}

/** Whether `event` links to `predecessor` (null when the event at position − 1 is missing). */
export function isLinked(event: LinkCheck, predecessor: { hash: string } | null): boolean {
  return event.previousHash === expectedPreviousHash(event.position, predecessor?.hash ?? null);
}
