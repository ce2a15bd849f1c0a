import canonicalize from 'canonicalize';
import { sha256, toHex, utf8 } from './bytes';

/** A value per personal field of a version-2 event: salts, or the commitments of erased fields (docs/contract.md §17). */
export interface FieldSecrets {
  actor?: string;
  resource?: string;
  context?: Record<string, string>;
}

/** The members of an event as the API shows it that its hash covers (docs/contract.md §3, §17). */
export interface HashedEvent {
  id: string;
  chain: { id: string; position: number };
  /** null once erased (version 2). */
  actor: string | null;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
  timestamp: string;
  previousHash: string;
  /** Version-2 events only. */
  hashing?: { version: 2; salts: FieldSecrets; commitments: FieldSecrets };
}

async function sha256Hex(value: unknown): Promise<string> {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('the event cannot be canonicalized');
  return toHex(await sha256(utf8(text)));
}

/** C(x) = hex(SHA-256(UTF-8(JCS([salt, x])))) */
function commitment(salt: string | undefined, value: unknown): Promise<string> {
  if (salt === undefined) throw new Error('a field that holds a value has no salt');
  return sha256Hex([salt, value]);
}

/**
 * hex(SHA-256(UTF-8(JCS(payload)))), JCS being RFC 8785: version 1 over the payload of docs/contract.md §3;
 * version 2 (an event with `hashing`) over the commitments of §17 in place of the personal values,
 * an erased field's taken from `hashing.commitments`.
 */
export async function recomputeEventHash(event: HashedEvent): Promise<string> {
  const base = {
    id: event.id,
    chainId: event.chain.id,
    position: event.chain.position,
    action: event.action,
    timestamp: event.timestamp,
    previousHash: event.previousHash,
  };
  const { hashing } = event;
  if (hashing === undefined)
    return sha256Hex({ ...base, actor: event.actor, resource: event.resource, context: event.context });
  const { salts, commitments } = hashing;
  let context: Record<string, string> | null = null;
  if (event.context !== null || commitments.context !== undefined) {
    context = { ...commitments.context };
    for (const [member, value] of Object.entries(event.context ?? {}))
      context[member] = await commitment(salts.context?.[member], value);
  }
  return sha256Hex({
    v: 2,
    ...base,
    actor: commitments.actor ?? (await commitment(salts.actor, event.actor)),
    resource:
      commitments.resource ?? (event.resource === null ? null : await commitment(salts.resource, event.resource)),
    context,
  });
}
