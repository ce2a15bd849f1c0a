import { computeEventHashV2, erase } from './event-hash-v2';
import { deriveSalts, hashingOf, newSaltSeed, recomputeStoredHash } from './salt-seed';

/*
 * Salts derived from an event's seed (docs/hashing.md, "Version 2"). The vector was computed apart,
 * with Python's hashlib: sha256(bytes.fromhex(seed) + b'\x00' + path.encode()).hexdigest()[:32].
 */
const SEED = '000102030405060708090a0b0c0d0e0f';

describe('salt seeds', () => {
  it('derives each field’s salt as the first half of SHA-256(seed ‖ 0x00 ‖ path)', () => {
    expect(deriveSalts(SEED, { actor: 'a', resource: 'r', context: { ip: 1, café: 2 } })).toEqual({
      actor: '247741717d3b457028080d6cd0828e85',
      resource: 'adbbcc2854af6f4c1ba870346325ab04',
      context: { ip: '531e8f99c7baeab64271aa673a22868f', café: 'd27b3ca1a43554608dab1fb9fde512bc' },
    });
  });

  it('gives salts only to the fields that hold a value', () => {
    expect(deriveSalts(SEED, { actor: 'a', resource: null, context: null })).toEqual({
      actor: '247741717d3b457028080d6cd0828e85',
    });
    expect(deriveSalts(SEED, { actor: 'a', resource: null, context: {} })).toEqual({
      actor: '247741717d3b457028080d6cd0828e85',
      context: {},
    });
  });

  it('draws a new 16-byte seed every time, across refills of its pool', () => {
    const seeds = Array.from({ length: 1000 }, () => newSaltSeed());
    expect(seeds.every((s) => /^[0-9a-f]{32}$/.test(s))).toBe(true);
    expect(new Set(seeds).size).toBe(seeds.length);
  });

  it('recomputes a stored event by its version: the seed, or what an erasure kept', () => {
    const event = {
      id: 'evt_01JQ3V2D2K3M4N5P6Q7R8S9T0V',
      chainId: 'chn_01JQ3V2C8N4K7M2P9R6T0V1XCH',
      position: 1,
      actor: 'zoe@example.com',
      action: 'user.login',
      resource: null,
      context: { ip: '203.0.113.9', ua: 'Firefox' },
      timestamp: '2027-03-01T09:15:01.250Z',
      previousHash: '0'.repeat(64),
    };
    const seeded = { ...event, saltSeed: SEED, erasure: null };
    const hashing = hashingOf(seeded)!;
    const hash = computeEventHashV2(event, hashing);
    expect(recomputeStoredHash(seeded)).toBe(hash);
    const erased = erase(event, hashing, ['actor', 'context.ip']);
    const stored = {
      ...erased.event,
      saltSeed: null,
      erasure: { salts: erased.hashing.salts, commitments: erased.hashing.commitments },
    };
    expect(recomputeStoredHash(stored)).toBe(hash);
    expect(recomputeStoredHash({ ...stored, actor: 'mallory' })).not.toBe(hash);
    expect(hashingOf({ ...event, saltSeed: null, erasure: null })).toBeNull();
  });
});
