import { generateKeyPairSync } from 'node:crypto';
import {
  CHECKPOINT_KEY_NAME,
  computeEventHash,
  eventLeafHash,
  formatVerifierKey,
  MerkleNode,
  merkleRoot,
  parseVerifierKey,
  signChainCheckpoint,
} from '@app/hashing';
import { like } from '@app/common/testing/like.fixture';
import { ChainAudit } from './chain-audit';
import { inspectWindow, StoredCheckpointRow, StoredEvent } from './chain-window';
import { CHAIN, honestChain, memoryRows, storedTree } from './chain.fixture';

const { privateKey } = generateKeyPairSync('ed25519');
const verifier = parseVerifierKey(formatVerifierKey(CHECKPOINT_KEY_NAME, privateKey));
const NOW = new Date('2026-11-22T08:00:00.000Z');

const rootOf = (events: readonly StoredEvent[], size: number): string =>
  merkleRoot(events.slice(0, size).map((e) => eventLeafHash(e.hash))).toString('hex');

function checkpoint(events: readonly StoredEvent[], size: number): StoredCheckpointRow {
  const hash = rootOf(events, size);
  return { size: String(size), hash, note: signChainCheckpoint({ chainId: CHAIN.id, size, hash }, privateKey) };
}

/** Whole-chain verification of `events` (head = the last) in windows of `size`, over these stored checkpoints and nodes. */
async function verify(
  events: readonly StoredEvent[],
  size: number,
  checkpoints: readonly StoredCheckpointRow[],
  nodes: readonly MerkleNode[] = storedTree(events),
) {
  const audit = new ChainAudit(CHAIN, [verifier]);
  const head = events.length;
  const rows = memoryRows(events, checkpoints, nodes);
  for (let after = 0; after < Math.max(1, head); after += size)
    audit.addWindow(
      await inspectWindow(rows, {
        chainId: CHAIN.id,
        accountId: CHAIN.accountId,
        after,
        upTo: Math.min(head, after + size),
      }),
    );
  return audit.result(NOW);
}

/** The events rewritten from `position` on: one edited, every later hash recomputed and relinked. */
function rewrite(events: readonly StoredEvent[], position: number): StoredEvent[] {
  const rows = events.map((e) => ({ ...e }));
  rows[position - 1]!.actor = 'mallory';
  for (let i = position - 1; i < rows.length; i++) {
    if (i > 0) rows[i]!.previousHash = rows[i - 1]!.hash;
    rows[i]!.hash = computeEventHash(rows[i]!);
  }
  return rows;
}

describe('whole-chain verification of the Merkle tree', () => {
  const chain = honestChain(45);

  it.each([1, 2, 3, 5, 7, 8, 16, 45, 64])(
    'recomputes the root at every checkpoint size and finds the stored tree whole (windows of %i)',
    async (size) => {
      for (const n of [0, 1, 2, 3, 4, 5, 8, 9, 17, 32, 33, 45]) {
        const events = chain.slice(0, n);
        const checkpoints = Array.from({ length: n + 1 }, (_, s) => checkpoint(events, s));
        expect(await verify(events, size, checkpoints)).toMatchObject({
          valid: true,
          errors: [],
          checkpointsChecked: n + 1,
        });
      }
    },
  );

  it.each([1, 3, 4, 10, 45])('reports every stored node altered or missing (windows of %i)', async (size) => {
    const honest = storedTree(chain);
    for (let k = 0; k < honest.length; k++) {
      const altered = honest.map((n, i) => (i === k ? { ...n, hash: Buffer.alloc(32, 7) } : n));
      const missing = honest.filter((_, i) => i !== k);
      for (const nodes of [altered, missing]) {
        const { level, index } = honest[k]!;
        const first = index * 2 ** level + 1;
        const result = await verify(chain, size, [], nodes);
        expect(result.valid).toBe(false);
        expect(result.errors).toContainEqual({
          position: first,
          eventId: null,
          message: like.stringMatching(
            new RegExp(`^the stored Merkle tree disagrees with the events: .*node \\(${level}, ${index}\\)`),
          ),
        });
      }
    }
  });

  it.each([1, 3, 4, 10, 45])(
    'reports a stored node stored twice, should the primary key be gone (windows of %i)',
    async (size) => {
      const honest = storedTree(chain);
      for (let k = 0; k < honest.length; k++) {
        const { level, index } = honest[k]!;
        for (const copy of [honest[k]!, { ...honest[k]!, hash: Buffer.alloc(32, 7) }]) {
          const result = await verify(chain, size, [], [...honest, copy]);
          expect(result.valid).toBe(false);
          expect(result.errors).toEqual([
            {
              position: index * 2 ** level + 1,
              eventId: null,
              message: like.stringMatching(
                new RegExp(
                  `^the stored Merkle tree disagrees with the events: 1 node\\(s\\) .*node \\(${level}, ${index}\\)`,
                ),
              ),
            },
          ]);
        }
      }
    },
  );

  it('reports a history rewritten with its tree after a checkpoint, at the checkpoint', async () => {
    const checkpoints = [checkpoint(chain, 20), checkpoint(chain, 33)];
    const forged = rewrite(chain, 12);
    for (const size of [1, 4, 7, 50]) {
      const result = await verify(forged, size, checkpoints, storedTree(forged));
      expect(result.errors).toEqual([
        { position: 20, eventId: forged[19]!.id, message: like.stringMatching(/rewritten after it was signed/) },
        { position: 33, eventId: forged[32]!.id, message: like.stringMatching(/rewritten after it was signed/) },
      ]);
    }
  });

  it('reports the stored tree of the old history under rewritten events', async () => {
    const forged = rewrite(chain, 40);
    const result = await verify(forged, 8, [], storedTree(chain));
    expect(result.valid).toBe(false);
    // Levels 0 and 1 are not stored: the first stored node over position 40 is (2, 9), over 37–40.
    expect(result.errors[0]).toMatchObject({
      position: 37,
      message: like.stringMatching(/stored Merkle tree .*node \(2, 9\), over positions 37–40/),
    });
  });
});
