import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json';
import {
  canonicalPayloadTextV2,
  computeEventHashV2,
  EventHashPayloadV2,
  FieldSecrets,
  HashingV2,
  hashPayloadV2Of,
  hashUnerasedV2,
} from './event-hash-v2';
import { deriveSalts, recomputeStoredHash, seededEventHashV2 } from './salt-seed';

/*
 * The one-pass version-2 hash (hashUnerasedV2: every commitment of an event at once, salts derived
 * as they are needed) against the one-field-at-a-time path it stands in for (deriveSalts, then
 * computeEventHashV2), and both against plain node:crypto and the RFC 8785 library: on the fixed
 * vectors of docs/hashing.md ("Version 2") and on random events.
 */
const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');
/** docs/hashing.md: the first 16 bytes of SHA-256(seed ‖ 0x00 ‖ UTF-8(path)), apart from salt-seed.ts. */
const referenceSalt = (seedHex: string, path: string): string =>
  sha256(Buffer.concat([Buffer.from(seedHex, 'hex'), Buffer.from([0]), Buffer.from(path, 'utf8')])).slice(0, 32);
function referenceSalts(seedHex: string, e: Pick<EventHashPayloadV2, 'actor' | 'resource' | 'context'>) {
  const salts: FieldSecrets = {};
  if (e.actor !== null) salts.actor = referenceSalt(seedHex, 'actor');
  if (e.resource !== null) salts.resource = referenceSalt(seedHex, 'resource');
  if (e.context !== null)
    salts.context = Object.fromEntries(Object.keys(e.context).map((m) => [m, referenceSalt(seedHex, `context.${m}`)]));
  return salts;
}
/** docs/hashing.md §7 with the RFC 8785 library: C(x), then the ten-member payload. */
function referenceHash(e: EventHashPayloadV2, salts: FieldSecrets): string {
  const C = (salt: string | undefined, value: unknown) => sha256(canonicalJson([salt, value]));
  const context =
    e.context === null
      ? null
      : Object.fromEntries(Object.entries(e.context).map(([m, v]) => [m, C(salts.context?.[m], v)]));
  const { id, chainId, position, action, timestamp, previousHash } = e;
  return sha256(
    canonicalJson({
      v: 2,
      id,
      chainId,
      position,
      action,
      timestamp,
      previousHash,
      actor: C(salts.actor, e.actor),
      resource: e.resource === null ? null : C(salts.resource, e.resource),
      context,
    }),
  );
}

/** The salt of `path` in `salts` (what a vector gives), as hashUnerasedV2 asks for it. */
const lookup =
  (salts: FieldSecrets) =>
  (path: string): string => {
    const salt = path.startsWith('context.') ? salts.context?.[path.slice('context.'.length)] : salts[path as 'actor'];
    if (salt === undefined) throw new Error(`no salt for ${path}`);
    return salt;
  };

// The vectors of docs/hashing.md (printed by docs/hashing-v2-vectors.py), copied by hand.
const CHAIN = 'chn_01JQ3V2C8N4K7M2P9R6T0V1XCH';
const vector1: EventHashPayloadV2 = {
  id: 'evt_01JQ3V2D1A2B3C4D5E6F7G8H9J',
  chainId: CHAIN,
  position: 1,
  actor: 'user_42',
  action: 'user.login',
  resource: null,
  context: null,
  timestamp: '2027-03-01T09:15:00.000Z',
  previousHash: '0'.repeat(64),
};
const vector2: EventHashPayloadV2 = {
  id: 'evt_01JQ3V2D2K3M4N5P6Q7R8S9T0V',
  chainId: CHAIN,
  position: 2,
  actor: 'zoe.muller@example.com',
  action: 'profile.update',
  resource: 'user:zoe',
  context: {
    name: 'Zo\u00eb M\u00fcller \ud83d\ude00',
    address: { lines: ['Bahnhofstrasse 1', 'B\u00fcro 3'], city: 'Z\u00fcrich', zip: 8001 },
    changes: 3,
  },
  timestamp: '2027-03-01T09:15:01.250Z',
  previousHash: '884a6a8f2ce8b9b1a52d690316cd545707785be14290cc83f3686e144427b1c1',
};
const vector4: EventHashPayloadV2 = {
  ...vector1,
  id: 'evt_01JQ3V2D3W4X5Y6Z7A8B9C0D1E',
  position: 3,
  previousHash: 'defdce3881df9882025d846c12f90d3f8d2644617ff95bdd59c39f6d1d2639e1',
  context: {},
  timestamp: '2027-03-01T09:15:02.000Z',
};
const VECTORS: Array<[string, EventHashPayloadV2, FieldSecrets, string]> = [
  [
    'vector 1 (resource and context null)',
    vector1,
    { actor: '000102030405060708090a0b0c0d0e0f' },
    '884a6a8f2ce8b9b1a52d690316cd545707785be14290cc83f3686e144427b1c1',
  ],
  [
    'vector 2 (a resource, three members: an object, non-ASCII text, an integer)',
    vector2,
    {
      actor: 'a0a1a2a3a4a5a6a7a8a9aaabacadaeaf',
      resource: 'b0b1b2b3b4b5b6b7b8b9babbbcbdbebf',
      context: {
        address: 'c0c1c2c3c4c5c6c7c8c9cacbcccdcecf',
        changes: 'd0d1d2d3d4d5d6d7d8d9dadbdcdddedf',
        name: 'e0e1e2e3e4e5e6e7e8e9eaebecedeeef',
      },
    },
    'defdce3881df9882025d846c12f90d3f8d2644617ff95bdd59c39f6d1d2639e1',
  ],
  [
    'vector 4 (an empty context)',
    vector4,
    { actor: 'f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff', context: {} },
    '13b9081ae701c6d23c383306743e389a9353f4b538c6edd63d1f8ca00c788702',
  ],
];

describe('hashUnerasedV2, all commitments of an event at once', () => {
  it.each(VECTORS)('gives the hash of %s', (_, event, salts, hash) => {
    expect(hashUnerasedV2(event, lookup(salts))).toBe(hash);
    expect(computeEventHashV2(event, { version: 2, salts, commitments: {} })).toBe(hash);
    expect(sha256(canonicalPayloadTextV2(hashPayloadV2Of(event, { version: 2, salts, commitments: {} })))).toBe(hash);
  });

  it('asks for the salt of exactly the fields that hold a value', () => {
    const asked: string[] = [];
    const salts = VECTORS[1]![2];
    hashUnerasedV2(vector2, (path) => (asked.push(path), lookup(salts)(path)));
    expect(asked.sort()).toEqual(['actor', 'context.address', 'context.changes', 'context.name', 'resource']);
  });

  it('leaves what is not of the plain shape to computeEventHashV2 (null)', () => {
    const salt = () => '000102030405060708090a0b0c0d0e0f';
    expect(hashUnerasedV2({ ...vector2, actor: null }, salt)).toBeNull();
    expect(hashUnerasedV2({ ...vector2, context: { a: 1, b: undefined } }, salt)).toBeNull();
    expect(hashUnerasedV2({ ...vector2, context: [1] as unknown as Record<string, unknown> }, salt)).toBeNull();
    expect(hashUnerasedV2({ ...vector2, position: Number.NaN }, salt)).toBeNull();
    expect(hashUnerasedV2({ ...vector2, resource: 7 as unknown as string }, salt)).toBeNull();
    expect(hashUnerasedV2({ ...vector2, id: 1 as unknown as string }, salt)).toBeNull();
  });
});

describe('seededEventHashV2 and deriveSalts', () => {
  const SEED = '000102030405060708090a0b0c0d0e0f';

  it('derive the salts of docs/hashing.md (computed apart, with Python) into the hash', () => {
    const event = { ...vector2, context: { ip: 1, café: 2 } };
    const salts = {
      actor: '247741717d3b457028080d6cd0828e85',
      resource: 'adbbcc2854af6f4c1ba870346325ab04',
      context: { ip: '531e8f99c7baeab64271aa673a22868f', café: 'd27b3ca1a43554608dab1fb9fde512bc' },
    };
    expect(deriveSalts(SEED, event)).toEqual(salts);
    expect(seededEventHashV2(event, SEED)).toBe(referenceHash(event, salts));
  });

  it('take a member name too long for the scratch buffer, and one of multi-byte characters, alike', () => {
    const long = 'm'.repeat(64);
    const event = { ...vector2, context: { [long]: 1, [`${long}x`]: 2, ['😀'.repeat(40)]: 3, ['é'.repeat(64)]: 4 } };
    expect(deriveSalts(SEED, event)).toEqual(referenceSalts(SEED, event));
    expect(seededEventHashV2(event, SEED)).toBe(referenceHash(event, referenceSalts(SEED, event)));
  });

  it('read a seed as Buffer.from(seed, "hex") does, whatever it is', () => {
    for (const seed of [
      SEED.toUpperCase(),
      SEED.slice(0, 30),
      `${SEED}ff`,
      `${SEED.slice(0, 20)}zz${SEED.slice(22)}`,
      '',
    ])
      expect(deriveSalts(seed, vector2)).toEqual(referenceSalts(seed, vector2));
  });

  it('recomputeStoredHash: an altered seeded row (actor null, a member undefined) determines no hash', () => {
    const stored = { ...vector2, saltSeed: SEED, erasure: null };
    expect(recomputeStoredHash(stored)).toBe(referenceHash(vector2, referenceSalts(SEED, vector2)));
    expect(recomputeStoredHash({ ...stored, actor: null })).toBeNull();
    expect(recomputeStoredHash({ ...stored, context: { a: undefined } })).toBeNull();
  });

  describe('property: the one pass gives what the one-field-at-a-time path gives', () => {
    const RANDOM_SEED = 20261207;
    const next = mulberry32(RANDOM_SEED);
    const texts = [
      '',
      'a',
      'é€😀',
      'e\u0301\u212b',
      '"q"\\',
      '\n\t\u0001',
      '\u2028',
      '｡',
      '😀x',
      'a.b',
      '*',
      '__proto__',
      'toJSON',
      'null',
      '\ud800',
    ];
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
    const value = (depth: number): unknown => {
      const r = next();
      if (depth > 2 || r < 0.5)
        return pick([pick(texts), Math.floor(next() * 2e6) - 1e6, next() * 1e-3, 1e21, -0, true, false, null]);
      if (r < 0.75) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(next() * 4) }, () => [pick(texts), value(depth + 1)]));
    };
    const name = () =>
      next() < 0.1 ? 'x'.repeat(60 + Math.floor(next() * 10)) : pick(texts) + (next() < 0.5 ? '' : pick(texts));
    const seedHex = () =>
      Array.from({ length: 16 }, () =>
        Math.floor(next() * 256)
          .toString(16)
          .padStart(2, '0'),
      ).join('');
    const randomEvent = (i: number): EventHashPayloadV2 => ({
      ...vector2,
      id: `evt_${String(i).padStart(26, '0')}`,
      position: 1 + Math.floor(next() * 2 ** 40),
      actor: pick(texts) + String(i),
      action: pick(texts),
      resource: next() < 0.3 ? null : pick(texts),
      context:
        next() < 0.2
          ? null
          : Object.fromEntries(Array.from({ length: Math.floor(next() * 7) }, () => [name(), value(0)])),
    });

    it(`holds for 1,000 random events and seeds (seed ${RANDOM_SEED})`, () => {
      for (let i = 0; i < 1000; i++) {
        const event = randomEvent(i);
        const seed = seedHex();
        const salts = deriveSalts(seed, event);
        expect(salts).toEqual(referenceSalts(seed, event));
        const oneByOne = sha256(canonicalPayloadTextV2(hashPayloadV2Of(event, { version: 2, salts, commitments: {} })));
        expect(computeEventHashV2(event, { version: 2, salts, commitments: {} })).toBe(oneByOne);
        expect(seededEventHashV2(event, seed)).toBe(oneByOne);
        expect(hashUnerasedV2(event, lookup(salts))).toBe(oneByOne);
        expect(recomputeStoredHash({ ...event, saltSeed: seed, erasure: null })).toBe(oneByOne);
        expect(referenceHash(event, salts)).toBe(oneByOne);
      }
    });

    /** What hashPayloadV2Of's checks make of it, field by field: the hash, or the error's message. */
    const general = (e: EventHashPayloadV2, h: HashingV2): string => {
      try {
        return sha256(canonicalPayloadTextV2(hashPayloadV2Of(e, h)));
      } catch (error) {
        return `error: ${(error as Error).message}`;
      }
    };
    const outcome = (e: EventHashPayloadV2, h: HashingV2): string => {
      try {
        return computeEventHashV2(e, h);
      } catch (error) {
        return `error: ${(error as Error).message}`;
      }
    };
    /** A hashing that may be off in any of the ways a wire object can be. */
    const mangled = (e: EventHashPayloadV2, salts: FieldSecrets): HashingV2 => {
      const h: HashingV2 = { version: 2, salts: structuredClone(salts), commitments: {} };
      const members = Object.keys(h.salts.context ?? {});
      const m = members[Math.floor(next() * members.length)];
      switch (Math.floor(next() * 12)) {
        case 0:
          delete h.salts.actor;
          break;
        case 1:
          h.salts.resource = seedHex();
          break;
        case 2:
          if (m !== undefined) delete h.salts.context![m];
          break;
        case 3:
          h.salts.context = { ...h.salts.context, extra: seedHex() };
          break;
        case 4:
          if (m !== undefined) h.salts.context![m] = seedHex().toUpperCase();
          break;
        case 5:
          h.commitments = { actor: sha256('x') };
          break;
        case 6:
          h.commitments = { context: {} };
          break;
        case 7:
          h.salts.context = undefined;
          break;
        case 8:
          (h as { version: number }).version = 1;
          break;
        case 9:
          h.salts.actor = `${h.salts.actor ?? ''}0`;
          break;
        case 10:
          (h.salts as { context: unknown }).context = null;
          break;
        default:
          break; // as it is
      }
      return h;
    };

    it(`computeEventHashV2 hashes and refuses exactly as hashPayloadV2Of's checks, over 2,000 random wire hashings (seed ${RANDOM_SEED})`, () => {
      let hashed = 0;
      for (let i = 0; i < 2000; i++) {
        const event = randomEvent(i);
        const h = mangled(event, deriveSalts(seedHex(), event));
        const expected = general(event, h);
        expect(outcome(event, h)).toBe(expected);
        if (!expected.startsWith('error')) hashed++;
      }
      expect(hashed).toBeGreaterThan(500); // both kinds were met
      expect(hashed).toBeLessThan(1900);
    });

    it('holds when the salts of another seed are derived in the middle of an event', () => {
      const b = randomEvent(2);
      const [sa, sb] = [seedHex(), seedHex()];
      const expectedB = seededEventHashV2(b, sb);
      let inner: string | null = null;
      // canonicalize calls a value's toJSON: the other seed's salts are derived between member a's and b's.
      const interrupting = { toJSON: () => ((inner = seededEventHashV2(b, sb)), 'x') };
      const a = { ...vector2, context: { a: interrupting, b: 'y', c: 'z' } };
      expect(seededEventHashV2(a, sa)).toBe(
        referenceHash({ ...a, context: { a: 'x', b: 'y', c: 'z' } }, referenceSalts(sa, a)),
      );
      expect(inner).toBe(expectedB);
    });
  });
});

function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
