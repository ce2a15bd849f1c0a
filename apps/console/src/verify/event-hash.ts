import canonicalize from 'canonicalize';
import { sha256, toHex, utf8 } from './bytes';

/** The members of an event as the API shows it that its hash covers (docs/contract.md §3). */
export interface HashedEvent {
  id: string;
  chain: { id: string; position: number };
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
  timestamp: string;
  previousHash: string;
}

/** hex(SHA-256(UTF-8(JCS(payload)))), JCS being RFC 8785, over exactly the payload of docs/contract.md §3. */
export async function recomputeEventHash(event: HashedEvent): Promise<string> {
  const payload = {
    id: event.id,
    chainId: event.chain.id,
    position: event.chain.position,
    actor: event.actor,
    action: event.action,
    resource: event.resource,
    context: event.context,
    timestamp: event.timestamp,
    previousHash: event.previousHash,
  };
  const text = canonicalize(payload);
  if (text === undefined) throw new Error('the event cannot be canonicalized');
  return toHex(await sha256(utf8(text)));
}
