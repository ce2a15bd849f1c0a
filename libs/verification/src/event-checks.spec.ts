import { computeEventHash, EventHashPayload, GENESIS_HASH, StoredSecrets } from '@app/hashing';
import { judgeEvent as sut } from './event-checks';

type Stored = EventHashPayload & StoredSecrets & { hash: string };

function event(position: number, previousHash: string, overrides: Partial<Stored> = {}): Stored {
  const e: Stored = {
    id: `evt_01JDQ8Z5X3N4K7M2P9R6T0V1W${position}`,
    chainId: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X',
    position,
    actor: 'user_42',
    action: 'user.login',
    resource: null,
    context: { ip: '10.0.0.1' },
    timestamp: `2026-11-22T07:24:5${position}.449Z`,
    previousHash,
    hash: '',
    saltSeed: null,
    erasure: null,
  };
  e.hash = computeEventHash(e);
  return { ...e, ...overrides };
}

describe('judgeEvent', () => {
  const first = event(1, GENESIS_HASH);
  const second = event(2, first.hash);

  it('passes an honest genesis event and an honest linked event', () => {
    expect(sut(first, null)).toEqual({ computedHash: first.hash, hashMatches: true, chainIntact: true, errors: [] });
    expect(sut(second, first)).toEqual({ computedHash: second.hash, hashMatches: true, chainIntact: true, errors: [] });
  });

  it('reports a hash mismatch when a hashed field changed, with both hashes', () => {
    const result = sut({ ...second, actor: 'mallory' }, first);
    expect(result.hashMatches).toBe(false);
    expect(result.chainIntact).toBe(true);
    expect(result.computedHash).not.toBe(second.hash);
    expect(result.errors).toEqual([
      `stored hash ${second.hash} does not match the hash recomputed from the event, ${result.computedHash}: the event was altered`,
    ]);
  });

  it('reports a missing predecessor', () => {
    expect(sut(second, null)).toMatchObject({
      hashMatches: true,
      chainIntact: false,
      errors: ['the event at position 1 is missing: the chain has a gap before position 2'],
    });
  });

  it('reports a link mismatch, and a genesis event that does not start from zeros', () => {
    const other = { hash: 'f'.repeat(64), timestamp: first.timestamp };
    expect(sut(second, other).errors).toEqual([
      `previousHash ${first.hash} does not match the hash of the event at position 1, ${other.hash}: an event before it was altered, removed or renumbered`,
    ]);
    const forged = event(1, 'a'.repeat(64));
    expect(sut(forged, null)).toMatchObject({
      hashMatches: true,
      chainIntact: false,
      errors: [expect.stringMatching(/previousHash of 64 zeros \(the genesis hash\), not a{64}$/)],
    });
  });

  it('reports a timestamp earlier than its predecessor’s, naming both; an equal one is in order', () => {
    const earlier = event(2, first.hash, {});
    const back = { ...earlier, timestamp: '2026-11-22T07:24:50.000Z' };
    back.hash = computeEventHash(back);
    expect(sut(back, first)).toEqual({
      computedHash: back.hash,
      hashMatches: true,
      chainIntact: false,
      errors: [
        `timestamp 2026-11-22T07:24:50.000Z is earlier than ${first.timestamp}, the timestamp of the event at position 1: timestamps never decrease along a chain`,
      ],
    });
    const same = { ...earlier, timestamp: first.timestamp };
    same.hash = computeEventHash(same);
    expect(sut(same, first).errors).toEqual([]);
  });

  it('names every failure when several happen', () => {
    expect(sut({ ...second, action: 'x' }, null).errors).toHaveLength(2);
    const back = { ...second, timestamp: '2020-01-01T00:00:00.000Z' };
    expect(sut(back, { hash: 'f'.repeat(64), timestamp: first.timestamp }).errors).toEqual([
      expect.stringMatching(/^stored hash/),
      expect.stringMatching(/^previousHash/),
      expect.stringMatching(/^timestamp 2020-01-01T00:00:00.000Z is earlier/),
    ]);
  });
});
