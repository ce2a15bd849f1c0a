import { generateKeyPairSync } from 'node:crypto';
import { CHECKPOINT_KEY_NAME, formatVerifierKey, parseVerifierKey, signChainCheckpoint } from '@app/hashing';
import { like } from '@app/common/testing/like.fixture';
import { CHAIN } from './chain.fixture';
import { pruneRecordFailures } from './prune-record';

const { privateKey } = generateKeyPairSync('ed25519');
const verifiers = [parseVerifierKey(formatVerifierKey(CHECKPOINT_KEY_NAME, privateKey))];
const HASH = 'ab'.repeat(32);
const signed = (size: number) => ({
  size,
  hash: HASH,
  note: signChainCheckpoint({ chainId: CHAIN.id, size, hash: HASH }, privateKey),
});
/** A row anyone able to insert checkpoints could write: a note no key of the service signed. */
const forged = (size: number) => {
  const other = generateKeyPairSync('ed25519').privateKey;
  return { size, hash: HASH, note: signChainCheckpoint({ chainId: CHAIN.id, size, hash: HASH }, other) };
};

describe('pruneRecordFailures', () => {
  const chain = (prunedThrough: number) => ({ id: CHAIN.id, prunedThrough });

  it('accepts a pruned prefix tiled exactly by recorded batches, each covered by a signed checkpoint', () => {
    const prunes = [
      { firstPosition: 1, lastPosition: 3, checkpointSize: 10 },
      { firstPosition: 4, lastPosition: 8, checkpointSize: 10 },
    ];
    expect(pruneRecordFailures(chain(8), prunes, [signed(10)], verifiers)).toEqual([]);
    expect(pruneRecordFailures(chain(0), [], [], verifiers)).toEqual([]);
  });

  it('names the positions no recorded prune explains: at the start, between prunes, after the last', () => {
    expect(pruneRecordFailures(chain(4), [], [], verifiers)).toEqual([
      {
        position: 1,
        message: like.stringMatching(/^the chain starts after positions 1–4, but .* records no prune of them/),
      },
    ]);
    const prunes = [
      { firstPosition: 1, lastPosition: 2, checkpointSize: 9 },
      { firstPosition: 5, lastPosition: 5, checkpointSize: 9 },
    ];
    const failures = pruneRecordFailures(chain(7), prunes, [signed(9)], verifiers);
    expect(failures.map((f) => f.position)).toEqual([3, 6]);
    expect(failures[0]!.message).toMatch(/after positions 3–4/);
    expect(failures[1]!.message).toMatch(/after positions 6–7/);
    expect(
      pruneRecordFailures(chain(1), [{ firstPosition: 1, lastPosition: 3, checkpointSize: 9 }], [signed(9)], verifiers),
    ).toEqual([
      {
        position: 2,
        message: like.stringMatching(/records prunes up to position 3, but the chain's first retained position is 2/),
      },
    ]);
  });

  it('reports a prune that relied on a forged checkpoint row, a missing one, or none at all', () => {
    const prunes = [{ firstPosition: 1, lastPosition: 5, checkpointSize: 5 }];
    const [failure] = pruneRecordFailures(chain(5), prunes, [forged(5)], verifiers);
    expect(failure).toEqual({
      position: 1,
      message: like.stringMatching(
        /prune of positions 1–5 relied on a stored checkpoint of size 5 that is not validly signed/,
      ),
    });
    expect(pruneRecordFailures(chain(5), prunes, [], verifiers)).toHaveLength(1);
    expect(pruneRecordFailures(chain(5), [{ ...prunes[0]!, checkpointSize: null }], [], verifiers)[0]!.message).toMatch(
      /while no stored checkpoint covered it/,
    );
    // A genuine note of another size stored under this size does not count either.
    expect(pruneRecordFailures(chain(5), prunes, [{ ...signed(7), size: 5 }], verifiers)).toHaveLength(1);
  });
});
