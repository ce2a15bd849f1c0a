import { computeEventHash, eventLeafHash, GENESIS_HASH, nodeHash } from '@app/hashing';
import type { StoredCheckpointRow, StoredEvent, WindowRows } from './chain-window';
import type { StoredNodeRow } from './window-tree';

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

/**
 * The Merkle nodes a database holds for these events (as the migration's backfill builds them):
 * the leaf of each position present (first occurrence), and every parent both of whose children
 * are there. In the order a window reads them.
 */
export function storedTree(events: readonly StoredEvent[]): StoredNodeRow[] {
  const levels: Map<number, Buffer>[] = [new Map()];
  for (const e of events) if (!levels[0]!.has(e.position - 1)) levels[0]!.set(e.position - 1, eventLeafHash(e.hash));
  for (let level = 0; levels[level]!.size > 0; level++) {
    const up = new Map<number, Buffer>();
    for (const [index, hash] of levels[level]!) {
      const right = levels[level]!.get(index + 1);
      if (index % 2 === 0 && right) up.set(index / 2, nodeHash(hash, right));
    }
    levels.push(up);
  }
  const rows = levels.flatMap((nodes, level) =>
    [...nodes].map(([index, hash]) => ({ level, index: String(index), hash, end: (index + 1) * 2 ** level })),
  );
  return rows
    .sort((a, b) => a.end - b.end || a.level - b.level)
    .map(({ level, index, hash }) => ({ level, index, hash }));
}

/** A window's rows from memory: `events` in position order, their stored tree unless given, and checkpoints. */
export function memoryRows(
  events: readonly StoredEvent[],
  checkpoints: readonly StoredCheckpointRow[] = [],
  nodes: readonly StoredNodeRow[] = storedTree(events),
): WindowRows {
  const end = (n: StoredNodeRow) => (Number(n.index) + 1) * 2 ** n.level;
  return {
    checkpoints: async ({ after, upTo }, onRow) =>
      checkpoints.filter((c) => Number(c.size) > (after === 0 ? -1 : after) && Number(c.size) <= upTo).forEach(onRow),
    events: async ({ after, upTo }, onRow) =>
      events.filter((e) => e.position > after && e.position <= upTo).forEach(onRow),
    nodes: async ({ after, upTo }, onRow) => nodes.filter((n) => end(n) > after && end(n) <= upTo).forEach(onRow),
  };
}
