import { createHash } from 'node:crypto';
import { canonicalJson } from '@app/hashing';
import type { EventView } from '../../apps/api/src/events/dto/event.view';

const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** C(x) of docs/contract.md §17: the commitment to a value under its salt. */
const commitment = (salt: string | undefined, value: unknown): string => {
  if (salt === undefined) throw new Error('a field that holds a value has no salt');
  return sha256(canonicalJson([salt, value]));
};

/**
 * The hash of an event as the API answers it, recomputed from the contract's text (§3 for version 1,
 * §17 for version 2: from the answer's `hashing`) with nothing of the service's hashing code but the
 * canonicalizer; `changes` replace fields first (a forger's edit).
 */
export function answerHash(event: EventView, changes: Partial<EventView> = {}): string {
  const e = { ...event, ...changes };
  const base = {
    id: e.id,
    chainId: e.chain.id,
    position: e.chain.position,
    action: e.action,
    timestamp: e.timestamp,
    previousHash: e.previousHash,
  };
  if (e.hashing === undefined)
    return sha256(canonicalJson({ ...base, actor: e.actor, resource: e.resource, context: e.context }));
  const { salts, commitments } = e.hashing;
  const erasedContext = commitments.context ?? {};
  const context =
    e.context === null && commitments.context === undefined
      ? null
      : {
          ...Object.fromEntries(
            Object.entries(e.context ?? {}).map(([member, value]) => [
              member,
              commitment(salts.context?.[member], value),
            ]),
          ),
          ...erasedContext,
        };
  return sha256(
    canonicalJson({
      v: 2,
      ...base,
      actor: commitments.actor ?? commitment(salts.actor, e.actor),
      resource: commitments.resource ?? (e.resource === null ? null : commitment(salts.resource, e.resource)),
      context,
    }),
  );
}
