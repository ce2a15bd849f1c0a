import { computeEventHash, GENESIS_HASH } from '@app/hashing';
import { EventEntity } from '@app/database';
import { checkIntegrity as sut } from './event-integrity';

function event(position: number, previousHash: string, overrides: Partial<EventEntity> = {}): EventEntity {
  const e = Object.assign(new EventEntity(), {
    id: `evt_01JDQ8Z5X3N4K7M2P9R6T0V1W${position}`,
    accountId: 'acc_01JDQ8Z5X3N4K7M2P9R6T0V1WA',
    chainId: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X',
    position,
    actor: 'user_42',
    action: 'user.login',
    resource: null,
    context: { ip: '10.0.0.1' },
    timestamp: new Date('2026-11-22T07:24:53.449Z'),
    previousHash,
    hash: '',
  });
  e.hash = computeEventHash({ ...e, timestamp: e.timestamp.toISOString() });
  return Object.assign(e, overrides);
}

describe('checkIntegrity', () => {
  const first = event(1, GENESIS_HASH);
  const second = event(2, first.hash);

  it('passes an honest genesis event and an honest linked event', () => {
    expect(sut(first, null)).toEqual({ computedHash: first.hash, hashMatches: true, chainIntact: true, errors: [] });
    expect(sut(second, first)).toEqual({ computedHash: second.hash, hashMatches: true, chainIntact: true, errors: [] });
  });

  it('reports a hash mismatch when a hashed field changed, with both hashes', () => {
    const result = sut({ ...second, actor: 'mallory' } as EventEntity, first);
    expect(result.hashMatches).toBe(false);
    expect(result.chainIntact).toBe(true);
    expect(result.computedHash).not.toBe(second.hash);
    expect(result.errors).toEqual([`hash mismatch: stored ${second.hash} computed ${result.computedHash}`]);
  });

  it('reports a missing predecessor', () => {
    expect(sut(second, null)).toMatchObject({
      hashMatches: true,
      chainIntact: false,
      errors: ['previous event (position 1) is missing'],
    });
  });

  it('reports a link mismatch, and a genesis event that does not start from zeros', () => {
    const other = { hash: 'f'.repeat(64) };
    expect(sut(second, other).errors).toEqual([
      `link mismatch: previousHash ${first.hash} does not equal the hash of position 1 (${other.hash})`,
    ]);
    const forged = event(1, 'a'.repeat(64));
    expect(sut(forged, null)).toMatchObject({
      hashMatches: true,
      chainIntact: false,
      errors: [expect.stringContaining('genesis')],
    });
  });

  it('names both failures when both happen', () => {
    expect(sut({ ...second, action: 'x' } as EventEntity, null).errors).toHaveLength(2);
  });
});
