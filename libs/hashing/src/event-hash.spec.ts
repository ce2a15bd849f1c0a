import { canonicalJson } from './canonical-json';
import {
  canonicalPayloadText,
  computeEventHash,
  EventHashPayload,
  expectedPreviousHash,
  GENESIS_HASH,
  hashPayloadOf,
  isLinked,
  sha256Hex,
} from './event-hash';

/*
 * Known vectors. The canonical texts were written out by hand from docs/contract.md §3 and
 * the digests computed outside this code with `printf '%s' '<text>' | sha256sum`.
 */
const ZEROS = '0000000000000000000000000000000000000000000000000000000000000000';

const genesis: EventHashPayload = {
  id: 'evt_01JDQ8Z5X3N4K7M2P9R6T0V1WA',
  chainId: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X',
  position: 1,
  actor: 'user_42',
  action: 'user.login',
  resource: null,
  context: null,
  timestamp: '2026-11-22T07:24:53.449Z',
  previousHash: ZEROS,
};
const GENESIS_TEXT =
  '{"action":"user.login","actor":"user_42","chainId":"chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X","context":null,' +
  '"id":"evt_01JDQ8Z5X3N4K7M2P9R6T0V1WA","position":1,' +
  '"previousHash":"0000000000000000000000000000000000000000000000000000000000000000",' +
  '"resource":null,"timestamp":"2026-11-22T07:24:53.449Z"}';
const GENESIS_DIGEST = '28a03bb8e2932f87c4639cbcd76ed9ff3de51f5951aa18c24b360a53308bba19';

const second: EventHashPayload = {
  id: 'evt_01JDQ8Z6A1B2C3D4E5F6G7H8J9',
  chainId: 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X',
  position: 2,
  actor: 'alice@example.com',
  action: 'document.update',
  resource: 'doc:123',
  context: {
    tags: ['\u00fcn\u00ef', '\ud83d\ude00', 1, null, true],
    note: 'caf\u00e9',
    ratio: -0.25,
    nested: { z: false, a: { y: [], b: {} } },
    items: [
      { sku: 'A-1', qty: 2 },
      { sku: 'B-2', qty: 1 },
    ],
    emoji: '\ud83d\ude00',
    currency: '\u20ac',
    count: 3,
    amount: 12.5,
  },
  timestamp: '2026-11-22T07:24:54.001Z',
  previousHash: GENESIS_DIGEST,
};
const SECOND_TEXT =
  '{"action":"document.update","actor":"alice@example.com","chainId":"chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X",' +
  '"context":{"amount":12.5,"count":3,"currency":"€","emoji":"😀",' +
  '"items":[{"qty":2,"sku":"A-1"},{"qty":1,"sku":"B-2"}],"nested":{"a":{"b":{},"y":[]},"z":false},' +
  '"note":"café","ratio":-0.25,"tags":["ünï","😀",1,null,true]},' +
  '"id":"evt_01JDQ8Z6A1B2C3D4E5F6G7H8J9","position":2,' +
  '"previousHash":"28a03bb8e2932f87c4639cbcd76ed9ff3de51f5951aa18c24b360a53308bba19",' +
  '"resource":"doc:123","timestamp":"2026-11-22T07:24:54.001Z"}';
const SECOND_DIGEST = '4560fb8e4d6233db079a405d19b862c7a7051a14365968e82ceb6d52f5a7215b';

describe('GENESIS_HASH', () => {
  it('is 64 zeros', () => {
    expect(GENESIS_HASH).toBe(ZEROS);
    expect(GENESIS_HASH).toMatch(/^0{64}$/);
  });
});

describe('sha256Hex', () => {
  const sut = sha256Hex;

  it.each([
    ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
    ['\u20ac', 'c4cc90ed3d26f12d4b08a75140970a7904035c31cbb4515a83f19b9003c00d1d'],
  ])('hashes the UTF-8 bytes of %p to lowercase hex', (text, digest) => {
    expect(sut(text)).toBe(digest);
  });

  it('agrees with sha256sum on the hand-written canonical texts', () => {
    expect(sut(GENESIS_TEXT)).toBe(GENESIS_DIGEST);
    expect(sut(SECOND_TEXT)).toBe(SECOND_DIGEST);
  });
});

describe('computeEventHash', () => {
  const sut = computeEventHash;

  it('matches the genesis vector', () => {
    expect(canonicalJson(hashPayloadOf(genesis))).toBe(GENESIS_TEXT);
    expect(sut(genesis)).toBe(GENESIS_DIGEST);
  });

  it('matches the position-2 vector with a nested unicode context', () => {
    expect(canonicalJson(hashPayloadOf(second))).toBe(SECOND_TEXT);
    expect(sut(second)).toBe(SECOND_DIGEST);
  });

  it('ignores members that are not hashed', () => {
    const exported = {
      ...second,
      hash: SECOND_DIGEST,
      createdAt: second.timestamp,
      accountId: 'acc_01JDQ8Z5V0000000000000000A',
      chain: { id: second.chainId, name: 'default', position: 2 },
    };
    expect(sut(exported)).toBe(SECOND_DIGEST);
  });

  const changes: Array<[keyof EventHashPayload, unknown]> = [
    ['id', 'evt_01JDQ8Z6A1B2C3D4E5F6G7H8JA'],
    ['chainId', 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1Y'],
    ['position', 3],
    ['actor', 'alice@example.org'],
    ['action', 'document.delete'],
    ['resource', null],
    ['context', null],
    ['timestamp', '2026-11-22T07:24:54.002Z'],
    ['previousHash', ZEROS],
  ];
  it.each(changes)('changes when %s changes', (member, value) => {
    expect(sut({ ...second, [member]: value })).not.toBe(SECOND_DIGEST);
  });

  it('changes when a value deep inside the context changes', () => {
    const context = { ...second.context, nested: { z: false, a: { y: [0], b: {} } } };
    expect(sut({ ...second, context })).not.toBe(SECOND_DIGEST);
  });

  it('tells an empty context from a null one, and "" from a null resource', () => {
    expect(sut({ ...genesis, context: {} })).not.toBe(GENESIS_DIGEST);
    expect(sut({ ...genesis, resource: '' })).not.toBe(GENESIS_DIGEST);
  });

  it('does not depend on the order of the context members', () => {
    const reversed = Object.fromEntries(Object.entries(second.context ?? {}).reverse());
    expect(Object.keys(reversed)[0]).toBe('amount');
    expect(sut({ ...second, context: reversed })).toBe(SECOND_DIGEST);
  });
});

describe('hashPayloadOf', () => {
  const sut = hashPayloadOf;

  it('keeps exactly the nine hashed members', () => {
    const richer = { ...genesis, hash: GENESIS_DIGEST, chain: { name: 'default' }, createdAt: 'x' };
    const payload = sut(richer);
    expect(Object.keys(payload).sort()).toEqual([
      'action',
      'actor',
      'chainId',
      'context',
      'id',
      'position',
      'previousHash',
      'resource',
      'timestamp',
    ]);
    expect(payload).toEqual(genesis);
  });
});

describe('expectedPreviousHash', () => {
  const sut = expectedPreviousHash;

  it('is the genesis hash at position 1, whatever the predecessor', () => {
    expect(sut(1, null)).toBe(ZEROS);
    expect(sut(1, SECOND_DIGEST)).toBe(ZEROS);
  });

  it("is the predecessor's hash after position 1", () => {
    expect(sut(2, GENESIS_DIGEST)).toBe(GENESIS_DIGEST);
  });

  it('is null when the predecessor is missing', () => {
    expect(sut(2, null)).toBeNull();
  });
});

describe('isLinked', () => {
  const sut = isLinked;

  it('accepts a genesis event carrying 64 zeros', () => {
    expect(sut(genesis, null)).toBe(true);
  });

  it('rejects a genesis event carrying anything else', () => {
    expect(sut({ position: 1, previousHash: GENESIS_DIGEST }, null)).toBe(false);
    expect(sut({ position: 1, previousHash: GENESIS_DIGEST }, { hash: GENESIS_DIGEST })).toBe(false);
  });

  it("accepts an event carrying its predecessor's real hash", () => {
    expect(sut(second, { hash: computeEventHash(genesis) })).toBe(true);
  });

  it('rejects a wrong link', () => {
    expect(sut(second, { hash: SECOND_DIGEST })).toBe(false);
    expect(sut({ ...second, previousHash: ZEROS }, { hash: GENESIS_DIGEST })).toBe(false);
  });

  it('rejects an event whose predecessor is missing, even one carrying 64 zeros', () => {
    expect(sut(second, null)).toBe(false);
    expect(sut({ position: 2, previousHash: ZEROS }, null)).toBe(false);
  });

  it('breaks the next link when an earlier event is tampered with', () => {
    const tampered = { ...genesis, actor: 'mallory' };
    expect(sut(second, { hash: computeEventHash(tampered) })).toBe(false);
  });
});

describe('canonicalPayloadText', () => {
  const sut = canonicalPayloadText;
  const general = (e: EventHashPayload): string => canonicalJson(hashPayloadOf(e));

  it('is exactly the general canonical text on the vectors', () => {
    expect(sut(genesis)).toBe(GENESIS_TEXT);
    expect(sut(second)).toBe(SECOND_TEXT);
  });

  it('agrees with the general canonical text on many generated payloads', () => {
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const texts = ['', 'a', 'é€😀', '"quoted"\\', '\n\t\u0001', '\u2028', '<>&', '｡', '😀x'];
    const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
    const value = (depth: number): unknown => {
      const r = next();
      if (depth > 2 || r < 0.3)
        return pick([pick(texts), Math.floor(next() * 1e6) - 5e5, next() * 1e-3, 1e21, -0, true, false, null]);
      if (r < 0.6) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
      return Object.fromEntries(
        Array.from({ length: Math.floor(next() * 5) }, () => [pick(texts) + pick(texts), value(depth + 1)]),
      );
    };
    for (let i = 0; i < 500; i++) {
      const e: EventHashPayload = {
        ...second,
        actor: pick(texts) + i,
        action: pick(texts),
        resource: next() < 0.3 ? null : pick(texts),
        context: next() < 0.2 ? null : (value(0) as Record<string, unknown>),
        position: 1 + Math.floor(next() * 2 ** 40),
      };
      expect(sut(e)).toBe(general(e));
    }
  });

  it('takes the general path for members of an unexpected type', () => {
    const odd = { ...genesis, resource: undefined, position: Number.NaN } as unknown as EventHashPayload;
    expect(() => sut(odd)).toThrow();
    const extra = { ...genesis, actor: 42 } as unknown as EventHashPayload;
    expect(sut(extra)).toBe(general(extra));
  });
});
