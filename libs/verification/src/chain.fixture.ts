import {
  eventLeafHash,
  recomputeStoredHash,
  GENESIS_HASH,
  LOWEST_STORED_LEVEL,
  MerkleNode,
  nodeHash,
} from '@app/hashing';
import type { StoredCheckpointRow, StoredEvent, WindowRows } from './chain-window';

/** Test fixtures of whole-chain verification (not part of any build: see the tsconfig.*.json excludes). */
export const CHAIN = { id: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X', accountId: 'acc_01JDQ8Z5V0000000000000000A' };

/** An honest chain of `n` stored events with real hashes, by hash version 1 (§3) or 2 (§17: a seed per event). */
export function honestChain(n: number, hashVersion: 1 | 2 = 1): StoredEvent[] {
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
    const secrets = {
      saltSeed: hashVersion === 2 ? position.toString(16).padStart(32, 'a') : null,
      erasure: null,
    };
    const hash = recomputeStoredHash({ ...payload, ...secrets });
    if (hash === null) throw new Error(`the fixture's event ${position} determines no hash`);
    events.push({ ...payload, ...secrets, ownAccount: true, hash });
    previousHash = hash;
  }
  return events;
}

/**
 * The Merkle nodes a database holds for these events (as the migrations build them): every parent
 * both of whose children are there, from the leaf of each position present (first occurrence).
 * Levels below LOWEST_STORED_LEVEL are not stored.
 */
export function storedTree(events: readonly StoredEvent[]): MerkleNode[] {
  const levels = [new Map<number, Buffer>()];
  for (const e of events) if (!levels[0]!.has(e.position - 1)) levels[0]!.set(e.position - 1, eventLeafHash(e.hash));
  for (let level = 0; levels[level]!.size > 0; level++) {
    const up = new Map<number, Buffer>();
    for (const [index, hash] of levels[level]!) {
      const right = levels[level]!.get(index + 1);
      if (index % 2 === 0 && right) up.set(index / 2, nodeHash(hash, right));
    }
    levels.push(up);
  }
  return levels.flatMap((nodes, level) =>
    level < LOWEST_STORED_LEVEL ? [] : [...nodes].map(([index, hash]) => ({ level, index, hash })),
  );
}

/**
 * A window's rows from memory: `events` in position order, their stored tree unless given, and
 * checkpoints. The nodes come as `verificationWindowNodesQuery` gives them: those of stored levels
 * whose last leaf is in the window, one row per level, each node as its 8-byte index and its hash, in index order,
 * leaving out hashes that are not 32 bytes.
 */
export function memoryRows(
  events: readonly StoredEvent[],
  checkpoints: readonly StoredCheckpointRow[] = [],
  nodes: readonly MerkleNode[] = storedTree(events),
): WindowRows {
  const end = (n: MerkleNode) => (n.index + 1) * 2 ** n.level;
  return {
    checkpoints: ({ after, upTo }, onRow) =>
      Promise.resolve(
        checkpoints.filter((c) => Number(c.size) > (after === 0 ? -1 : after) && Number(c.size) <= upTo).forEach(onRow),
      ),
    events: ({ after, upTo }, onRow) =>
      Promise.resolve(events.filter((e) => e.position > after && e.position <= upTo).forEach(onRow)),
    nodes: ({ after, upTo }, onRow) => {
      const levels = new Map<number, MerkleNode[]>();
      for (const n of nodes)
        if (n.level >= LOWEST_STORED_LEVEL && end(n) > after && end(n) <= upTo && n.hash.length === 32)
          levels.set(n.level, [...(levels.get(n.level) ?? []), n]);
      for (const [level, inLevel] of levels) {
        const packed = inLevel
          .sort((a, b) => a.index - b.index)
          .map((n) => {
            const index = Buffer.alloc(8);
            index.writeBigUInt64BE(BigInt(n.index));
            return Buffer.concat([index, n.hash]);
          });
        onRow({ level, nodes: Buffer.concat(packed) });
      }
      return Promise.resolve();
    },
  };
}
