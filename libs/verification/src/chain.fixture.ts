import { computeEventHash, GENESIS_HASH } from '@app/hashing';
import type { StoredEvent } from './chain-window';

/** Test fixtures of whole-chain verification (not part of any build: see the tsconfig.*.json excludes). */
export const CHAIN = { id: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X', accountId: 'acc_01JDQ8Z5V0000000000000000A' };

/** An honest chain of `n` stored events with real hashes. */
export function honestChain(n: number): StoredEvent[] {
  const events: StoredEvent[] = [];
  let previousHash = GENESIS_HASH;
  for (let position = 1; position <= n; position++) {
    const payload = {
      id: `evt_01JDQ8Z5X3N4K7M2P9R6T0V${String(position).padStart(3, '0')}`,
      chainId: CHAIN.id,
      position,
      actor: `user_${position % 7}`,
      action: 'doc.update',
      resource: position % 3 === 0 ? null : `doc:${position}`,
      context: position % 4 === 0 ? null : { position, tags: ['a', 'b'] },
      timestamp: new Date(Date.UTC(2026, 10, 22, 7, 0, position)).toISOString(),
      previousHash,
    };
    const hash = computeEventHash(payload);
    events.push({ ...payload, ownAccount: true, hash });
    previousHash = hash;
  }
  return events;
}
