import { createHash } from 'node:crypto';
import { canonicalJson } from './canonical-json';
import {
  canonicalPayloadTextV2,
  commitment,
  computeEventHashV2,
  erase,
  erasedFields,
  ErasureResult,
  EventHashPayloadV2,
  HashingV2,
  HashingV2Error,
  hashPayloadV2Of,
  isCommitment,
  isSalt,
  NEVER_ERASABLE,
  newSalt,
  parseFieldPath,
  saltsFor,
} from './event-hash-v2';

/*
 * Known vectors. Every text, commitment and hash below was printed by docs/hashing-v2-vectors.py,
 * an independent implementation with Python's standard library (hashlib, json.dumps), and copied
 * here by hand; docs/hashing.md ("Version 2") shows the same vectors.
 */
const ZEROS = '0'.repeat(64);
const CHAIN = 'chn_01JQ3V2C8N4K7M2P9R6T0V1XCH';

const v1Event: EventHashPayloadV2 = {
  id: 'evt_01JQ3V2D1A2B3C4D5E6F7G8H9J',
  chainId: CHAIN,
  position: 1,
  actor: 'user_42',
  action: 'user.login',
  resource: null,
  context: null,
  timestamp: '2027-03-01T09:15:00.000Z',
  previousHash: ZEROS,
};
const v1Hashing: HashingV2 = { version: 2, salts: { actor: '000102030405060708090a0b0c0d0e0f' }, commitments: {} };
const V1_TEXT =
  '{"action":"user.login","actor":"ee16994118e63dbd557e8b222b333d8493f2e7e540dfae780a6fce9f5472be1f",' +
  '"chainId":"chn_01JQ3V2C8N4K7M2P9R6T0V1XCH","context":null,"id":"evt_01JQ3V2D1A2B3C4D5E6F7G8H9J","position":1,' +
  '"previousHash":"0000000000000000000000000000000000000000000000000000000000000000","resource":null,' +
  '"timestamp":"2027-03-01T09:15:00.000Z","v":2}';
const V1_HASH = '884a6a8f2ce8b9b1a52d690316cd545707785be14290cc83f3686e144427b1c1';

const v2Event: EventHashPayloadV2 = {
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
  previousHash: V1_HASH,
};
const v2Hashing: HashingV2 = {
  version: 2,
  salts: {
    actor: 'a0a1a2a3a4a5a6a7a8a9aaabacadaeaf',
    resource: 'b0b1b2b3b4b5b6b7b8b9babbbcbdbebf',
    context: {
      address: 'c0c1c2c3c4c5c6c7c8c9cacbcccdcecf',
      changes: 'd0d1d2d3d4d5d6d7d8d9dadbdcdddedf',
      name: 'e0e1e2e3e4e5e6e7e8e9eaebecedeeef',
    },
  },
  commitments: {},
};
const C_ACTOR = 'cbf6a0a2b0e817a7fa682891135507c7ab08cfa23b1d44956af8811a27cce902';
const C_RESOURCE = '6f1a214c4cbdee0b75c0e83b8c03a2e8d1dcb59f0be3daccd3a846f169aca8ec';
const C_ADDRESS = 'ec4c68f9b0c7d72780ce8f3e21dfad95232475df949650aeab373ac79d049ed4';
const C_CHANGES = '307f78c3203bf01ca52a53a8c98a1c88f0d590fbc304f8de76b99c7e91095bc2';
const C_NAME = '21c06700a45ffb1ef481764ea762f337ab2b37103e8a946d850bc74dddaa9ec3';
const V2_TEXT =
  `{"action":"profile.update","actor":"${C_ACTOR}","chainId":"chn_01JQ3V2C8N4K7M2P9R6T0V1XCH",` +
  `"context":{"address":"${C_ADDRESS}","changes":"${C_CHANGES}","name":"${C_NAME}"},` +
  '"id":"evt_01JQ3V2D2K3M4N5P6Q7R8S9T0V","position":2,' +
  '"previousHash":"884a6a8f2ce8b9b1a52d690316cd545707785be14290cc83f3686e144427b1c1",' +
  `"resource":"${C_RESOURCE}","timestamp":"2027-03-01T09:15:01.250Z","v":2}`;
const V2_HASH = 'defdce3881df9882025d846c12f90d3f8d2644617ff95bdd59c39f6d1d2639e1';

/** Vector 2 after erasing actor and context.name: what the service stores and serves. */
const v3Event: EventHashPayloadV2 = {
  ...v2Event,
  actor: null,
  context: { address: v2Event.context?.address, changes: 3 },
};
const v3Hashing: HashingV2 = {
  version: 2,
  salts: {
    resource: 'b0b1b2b3b4b5b6b7b8b9babbbcbdbebf',
    context: { address: 'c0c1c2c3c4c5c6c7c8c9cacbcccdcecf', changes: 'd0d1d2d3d4d5d6d7d8d9dadbdcdddedf' },
  },
  commitments: { actor: C_ACTOR, context: { name: C_NAME } },
};

const v4Event: EventHashPayloadV2 = {
  ...v1Event,
  id: 'evt_01JQ3V2D3W4X5Y6Z7A8B9C0D1E',
  position: 3,
  previousHash: V2_HASH,
  context: {},
  timestamp: '2027-03-01T09:15:02.000Z',
};
const v4Hashing: HashingV2 = {
  version: 2,
  salts: { actor: 'f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff', context: {} },
  commitments: {},
};
const V4_TEXT =
  '{"action":"user.login","actor":"d68096c9a2ddd9709a5035de39de0672086246ccaf739aa2db01d471582fe31f",' +
  '"chainId":"chn_01JQ3V2C8N4K7M2P9R6T0V1XCH","context":{},"id":"evt_01JQ3V2D3W4X5Y6Z7A8B9C0D1E","position":3,' +
  '"previousHash":"defdce3881df9882025d846c12f90d3f8d2644617ff95bdd59c39f6d1d2639e1","resource":null,' +
  '"timestamp":"2027-03-01T09:15:02.000Z","v":2}';
const V4_HASH = '13b9081ae701c6d23c383306743e389a9353f4b538c6edd63d1f8ca00c788702';

/** An independent re-hash: plain node:crypto and the RFC 8785 library, nothing of event-hash-v2.ts. */
const sha256 = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const C = (salt: string | undefined, value: unknown): string => sha256(canonicalJson([salt, value]));
function independentHash(e: EventHashPayloadV2, h: HashingV2): string {
  const keptContext = e.context === null ? {} : e.context;
  const context = Object.fromEntries([
    ...Object.entries(h.commitments.context ?? {}),
    ...Object.entries(keptContext).map(([m, v]) => [m, C(h.salts.context?.[m], v)]),
  ]) as Record<string, string>;
  const payload = {
    v: 2,
    id: e.id,
    chainId: e.chainId,
    position: e.position,
    action: e.action,
    timestamp: e.timestamp,
    previousHash: e.previousHash,
    actor: h.commitments.actor ?? C(h.salts.actor, e.actor),
    resource: h.commitments.resource ?? (e.resource === null ? null : C(h.salts.resource, e.resource)),
    context: e.context === null ? null : context,
  };
  return sha256(canonicalJson(payload));
}

describe('the version-2 vectors', () => {
  it.each([
    ['1: no resource, null context', v1Event, v1Hashing, V1_TEXT, V1_HASH],
    ['2: a resource and three context members', v2Event, v2Hashing, V2_TEXT, V2_HASH],
    ['3: vector 2 after erasing actor and context.name', v3Event, v3Hashing, V2_TEXT, V2_HASH],
    ['4: an empty context', v4Event, v4Hashing, V4_TEXT, V4_HASH],
  ])('vector %s', (_name, event, hashing, text, hash) => {
    expect(canonicalJson(hashPayloadV2Of(event, hashing))).toBe(text);
    expect(canonicalPayloadTextV2(hashPayloadV2Of(event, hashing))).toBe(text);
    expect(sha256(text)).toBe(hash);
    expect(computeEventHashV2(event, hashing)).toBe(hash);
    expect(independentHash(event, hashing)).toBe(hash);
  });

  it("has vector 2's commitments", () => {
    const { salts } = v2Hashing;
    const context = v2Event.context ?? {};
    expect(commitment(salts.actor ?? '', v2Event.actor)).toBe(C_ACTOR);
    expect(commitment(salts.resource ?? '', v2Event.resource)).toBe(C_RESOURCE);
    expect(commitment(salts.context?.address ?? '', context.address)).toBe(C_ADDRESS);
    expect(commitment(salts.context?.changes ?? '', context.changes)).toBe(C_CHANGES);
    expect(commitment(salts.context?.name ?? '', context.name)).toBe(C_NAME);
  });

  it('erasing actor and context.name turns vector 2 into vector 3 exactly', () => {
    const sut = erase(v2Event, v2Hashing, ['actor', 'context.name']);
    expect(sut).toEqual({ event: v3Event, hashing: v3Hashing, erased: ['actor', 'context.name'] });
    expect(erasedFields(sut.hashing)).toEqual(['actor', 'context.name']);
  });
});

describe('newSalt', () => {
  it('draws 32 lowercase hex characters, never the same twice', () => {
    const salts = Array.from({ length: 1000 }, newSalt);
    for (const salt of salts) expect(salt).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set(salts).size).toBe(1000);
  });
});

describe('saltsFor', () => {
  const sut = saltsFor;

  it('salts exactly the fields that hold a value', () => {
    const salts = sut(v2Event);
    expect(Object.keys(salts).sort()).toEqual(['actor', 'context', 'resource']);
    expect(Object.keys(salts.context ?? {}).sort()).toEqual(['address', 'changes', 'name']);
    const all = [salts.actor, salts.resource, ...Object.values(salts.context ?? {})];
    for (const salt of all) expect(isSalt(salt)).toBe(true);
    expect(new Set(all).size).toBe(5);
  });

  it('gives a null resource no salt, a null context no context, an empty context {}', () => {
    expect(Object.keys(sut(v1Event))).toEqual(['actor']);
    expect(sut(v4Event).context).toEqual({});
  });

  it('keeps a member named __proto__ a member, and skips undefined ones', () => {
    const context = JSON.parse('{"__proto__": 1, "a": null}') as Record<string, unknown>;
    context.gone = undefined;
    const salts = sut({ actor: 'x', resource: null, context }).context ?? {};
    expect(Object.keys(salts).sort()).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(salts)).toBe(Object.prototype);
  });

  it('hashes what it salts', () => {
    const hashing: HashingV2 = { version: 2, salts: sut(v2Event), commitments: {} };
    expect(computeEventHashV2(v2Event, hashing)).toBe(independentHash(v2Event, hashing));
  });
});

describe('commitment', () => {
  const sut = commitment;
  const salt = 'a0a1a2a3a4a5a6a7a8a9aaabacadaeaf';

  it('writes strings exactly as the general canonicalizer does', () => {
    for (const text of [
      '',
      'é€😀',
      'e\u0301 \u212b',
      '"q"\\',
      '\n\t\u0001\u007f',
      '\u2028\u2029',
      '\ud800',
      '</script>',
    ]) {
      expect(sut(salt, text)).toBe(sha256(canonicalJson([salt, text])));
    }
  });

  it('commits to any JSON value, null included', () => {
    expect(sut(salt, null)).toBe(sha256(`["${salt}",null]`));
    expect(sut(salt, { b: [1, true], a: 'x' })).toBe(sha256(`["${salt}",{"a":"x","b":[1,true]}]`));
  });

  it('refuses a malformed salt and an undefined value', () => {
    for (const bad of ['', 'A0A1A2A3A4A5A6A7A8A9AAABACADAEAF', `${salt}0`, salt.slice(1), `"${salt.slice(2)}"`]) {
      expect(() => sut(bad, 'x')).toThrow(HashingV2Error);
    }
    expect(() => sut(salt, undefined)).toThrow(HashingV2Error);
  });
});

describe('isSalt and isCommitment', () => {
  it('accept exactly 32 and 64 lowercase hex characters', () => {
    expect(isSalt('0123456789abcdef0123456789abcdef')).toBe(true);
    expect(isCommitment(C_ACTOR)).toBe(true);
    for (const bad of [C_ACTOR, '0123456789ABCDEF0123456789abcdef', '0123456789abcdef0123456789abcdeg', 42, null]) {
      expect(isSalt(bad)).toBe(false);
    }
    for (const bad of [C_ACTOR.slice(1), C_ACTOR.toUpperCase(), `${C_ACTOR}\n`, 42]) {
      expect(isCommitment(bad)).toBe(false);
    }
  });
});

describe('computeEventHashV2', () => {
  const sut = computeEventHashV2;
  const s = (salts: HashingV2['salts'], commitments: HashingV2['commitments'] = {}): HashingV2 => ({
    version: 2,
    salts,
    commitments,
  });

  it.each<[string, EventHashPayloadV2, HashingV2, RegExp]>([
    ['an actor with neither value nor commitment', { ...v1Event, actor: null }, s({}), /actor has neither/],
    ['an actor with a value and no salt', v1Event, s({}), /actor has a value but no salt/],
    ['a value beside a kept commitment', v1Event, s({}, { actor: C_ACTOR }), /actor has both a value and a commitment/],
    [
      'a salt beside a kept commitment',
      { ...v1Event, actor: null },
      s(v1Hashing.salts, { actor: C_ACTOR }),
      /salt remains/,
    ],
    [
      'a salt beside a null resource',
      v1Event,
      s({ ...v1Hashing.salts, resource: newSalt() }),
      /resource has a salt but no value/,
    ],
    ['an uppercase salt', v1Event, s({ actor: 'A0A1A2A3A4A5A6A7A8A9AAABACADAEAF' }), /salt of actor must be 32/],
    [
      'a short commitment',
      { ...v1Event, actor: null },
      s({}, { actor: C_ACTOR.slice(2) }),
      /commitment of actor must be 64/,
    ],
    ['a null context with salts', v1Event, s({ ...v1Hashing.salts, context: { a: newSalt() } }), /context is null but/],
    [
      'a member both kept and erased',
      v2Event,
      s(v2Hashing.salts, { context: { name: C_NAME } }),
      /context.name has both/,
    ],
    [
      'an erased member that kept its salt',
      v3Event,
      s({ ...v3Hashing.salts, context: v2Hashing.salts.context }, v3Hashing.commitments),
      /context.name is erased but its salt remains/,
    ],
    [
      'a member without a salt',
      v2Event,
      s({ ...v2Hashing.salts, context: {} }),
      /context.address has a value but no salt/,
    ],
    ['hashing of version 1', v1Event, { ...v1Hashing, version: 1 } as unknown as HashingV2, /version is 1, not 2/],
    [
      'an actor that is not a string',
      { ...v1Event, actor: 42 } as unknown as EventHashPayloadV2,
      v1Hashing,
      /actor must be a string/,
    ],
    [
      'a resource left out',
      { ...v1Event, resource: undefined } as unknown as EventHashPayloadV2,
      v1Hashing,
      /resource must be/,
    ],
  ])('refuses %s', (_name, event, hashing, message) => {
    expect(() => sut(event, hashing)).toThrow(HashingV2Error);
    expect(() => sut(event, hashing)).toThrow(message);
  });

  it('names the event and every problem at once', () => {
    const error = catchError(() => sut({ ...v2Event, actor: null }, s({})));
    expect(error).toBeInstanceOf(HashingV2Error);
    expect((error as HashingV2Error).problems).toEqual([
      `event ${v2Event.id}: actor has neither a value nor a commitment`,
      `event ${v2Event.id}: resource has a value but no salt`,
      `event ${v2Event.id}: context.name has a value but no salt`,
      `event ${v2Event.id}: context.address has a value but no salt`,
      `event ${v2Event.id}: context.changes has a value but no salt`,
    ]);
  });

  const changed: Array<[string, EventHashPayloadV2, HashingV2]> = [
    ['a kept value', { ...v2Event, resource: 'user:zoe2' }, v2Hashing],
    ['a kept member', { ...v2Event, context: { ...v2Event.context, changes: 4 } }, v2Hashing],
    ['a salt', v2Event, { ...v2Hashing, salts: { ...v2Hashing.salts, actor: 'a0a1a2a3a4a5a6a7a8a9aaabacadaeae' } }],
    ['a kept commitment', v3Event, { ...v3Hashing, commitments: { ...v3Hashing.commitments, actor: C_RESOURCE } }],
    ['the position', { ...v2Event, position: 3 }, v2Hashing],
    ['the action', { ...v2Event, action: 'profile.delete' }, v2Hashing],
    ['the timestamp', { ...v2Event, timestamp: '2027-03-01T09:15:01.251Z' }, v2Hashing],
    ['the previous hash', { ...v2Event, previousHash: ZEROS }, v2Hashing],
  ];
  it.each(changed)('changes when %s changes', (_name, event, hashing) => {
    expect(sut(event, hashing)).not.toBe(V2_HASH);
    expect(sut(event, hashing)).toBe(independentHash(event, hashing));
  });

  it('tells a null context from an empty one, and a null resource from an erased one', () => {
    expect(sut({ ...v4Event, context: null }, { ...v4Hashing, salts: { actor: v4Hashing.salts.actor } })).not.toBe(
      V4_HASH,
    );
    const erasedResource = { ...v4Hashing, commitments: { resource: C_RESOURCE } };
    expect(sut(v4Event, erasedResource)).not.toBe(V4_HASH);
    expect(sut(v4Event, erasedResource)).toBe(independentHash(v4Event, erasedResource));
  });

  it('ignores members that are not hashed', () => {
    const richer = { ...v2Event, hash: V2_HASH, erased: [], chain: { id: CHAIN, name: 'default', position: 2 } };
    expect(sut(richer, v2Hashing)).toBe(V2_HASH);
  });
});

describe('parseFieldPath', () => {
  const sut = parseFieldPath;

  it('reads the paths of §17', () => {
    expect(sut('actor')).toEqual({ kind: 'actor' });
    expect(sut('resource')).toEqual({ kind: 'resource' });
    expect(sut('context.*')).toEqual({ kind: 'context.*' });
    expect(sut('context.ip')).toEqual({ kind: 'context', member: 'ip' });
    expect(sut('context.a.b')).toEqual({ kind: 'context', member: 'a.b' });
  });

  it('reads nothing else', () => {
    for (const path of [...NEVER_ERASABLE, 'context', 'Actor', 'actor ', 'contexts.x', 'hash', '', 'context.']) {
      expect(sut(path)).toBeNull();
    }
  });
});

describe('erase', () => {
  const sut = erase;

  it('leaves its inputs as they were', () => {
    const event = structuredClone(v2Event);
    const hashing = structuredClone(v2Hashing);
    sut(event, hashing, ['actor', 'resource', 'context.*']);
    expect(event).toEqual(v2Event);
    expect(hashing).toEqual(v2Hashing);
  });

  it('erases every member with context.*, leaving an empty context and every salt but none', () => {
    const { event, hashing, erased } = sut(v2Event, v2Hashing, ['context.*', 'resource', 'actor']);
    expect(event).toEqual({ ...v2Event, actor: null, resource: null, context: {} });
    expect(hashing).toEqual({
      version: 2,
      salts: { context: {} },
      commitments: {
        actor: C_ACTOR,
        resource: C_RESOURCE,
        context: { address: C_ADDRESS, changes: C_CHANGES, name: C_NAME },
      },
    });
    expect(erased).toEqual(['actor', 'context.address', 'context.changes', 'context.name', 'resource']);
    expect(computeEventHashV2(event, hashing)).toBe(V2_HASH);
  });

  it('does not list a field that holds no value, nor one erased before', () => {
    expect(sut(v1Event, v1Hashing, ['resource', 'context.*', 'context.x']).erased).toEqual([]);
    expect(sut(v3Event, v3Hashing, ['actor', 'context.name', 'context.nope']).erased).toEqual([]);
    const again = sut(v3Event, v3Hashing, ['actor', 'context.*']);
    expect(again.erased).toEqual(['context.address', 'context.changes']);
    expect(erasedFields(again.hashing)).toEqual(['actor', 'context.address', 'context.changes', 'context.name']);
  });

  it('lists a context member whose value was null', () => {
    const event = { ...v1Event, context: { a: null } };
    const hashing: HashingV2 = { version: 2, salts: saltsFor(event), commitments: {} };
    expect(sut(event, hashing, ['context.a']).erased).toEqual(['context.a']);
  });

  it('refuses a path that names no erasable field, before erasing anything', () => {
    for (const path of NEVER_ERASABLE) {
      expect(() => sut(v2Event, v2Hashing, ['actor', path])).toThrow(/is never erasable/);
    }
    expect(() => sut(v2Event, v2Hashing, ['context'])).toThrow(HashingV2Error);
    expect(() => sut(v2Event, v2Hashing, ['hash'])).toThrow(/is not actor, resource, context.<member> or context.\*/);
  });

  it('refuses an event whose hashing does not hash', () => {
    expect(() => sut({ ...v2Event, actor: 'someone else' }, v3Hashing, ['resource'])).toThrow(HashingV2Error);
  });

  it('keeps members that are not hashed, and members named __proto__ or with dots', () => {
    const context = JSON.parse('{"__proto__": "p", "a.b": "dots", "keep": 1}') as Record<string, unknown>;
    const event = { ...v1Event, context, hash: 'h', erased: [] as string[] };
    const hashing: HashingV2 = { version: 2, salts: saltsFor(event), commitments: {} };
    const before = computeEventHashV2(event, hashing);
    const sut1 = sut(event, hashing, ['context.__proto__', 'context.a.b']);
    expect(sut1.event.hash).toBe('h');
    expect(Object.keys(sut1.event.context ?? {})).toEqual(['keep']);
    expect(Object.keys(sut1.hashing.commitments.context ?? {}).sort()).toEqual(['__proto__', 'a.b']);
    expect(Object.keys(sut1.hashing.salts.context ?? {})).toEqual(['keep']);
    expect(sut1.erased).toEqual(['context.__proto__', 'context.a.b']);
    expect(computeEventHashV2(sut1.event, sut1.hashing)).toBe(before);
    expect(independentHash(sut1.event, sut1.hashing)).toBe(before);
  });
});

describe('erasedFields', () => {
  const sut = erasedFields;

  it('is [] before any erasure', () => {
    expect(sut(v2Hashing)).toEqual([]);
  });

  it('lists each erased field once, sorted by UTF-16 code units', () => {
    const hashing: HashingV2 = {
      version: 2,
      salts: {},
      commitments: {
        resource: C_RESOURCE,
        actor: C_ACTOR,
        context: { z: C_NAME, '😀': C_NAME, B: C_NAME, '｡': C_NAME },
      },
    };
    expect(sut(hashing)).toEqual(['actor', 'context.B', 'context.z', 'context.😀', 'context.｡', 'resource']);
  });
});

/** mulberry32, as test/support/seeded-random.ts (a lib does not import from test/): a failure replays from its seed. */
function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('erasure, property: the hash never changes', () => {
  const SEED = 20270301;
  const next = seededRandom(SEED);
  const texts = [
    '',
    'a',
    'é€😀',
    'e\u0301\u212b',
    '"q"\\',
    '\n\t\u0001',
    '\u2028',
    '<>&',
    '｡',
    '😀x',
    'a.b',
    '*',
    '__proto__',
    'null',
  ];
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const value = (depth: number): unknown => {
    const r = next();
    if (depth > 2 || r < 0.4) return pick([pick(texts), Math.floor(next() * 2e6) - 1e6, next() * 1e-3, true, null]);
    if (r < 0.7) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
    return Object.fromEntries(Array.from({ length: Math.floor(next() * 4) }, () => [pick(texts), value(depth + 1)]));
  };
  const randomContext = (): Record<string, unknown> =>
    Object.fromEntries(Array.from({ length: Math.floor(next() * 6) }, () => [pick(texts), value(0)]));
  const randomEvent = (i: number): EventHashPayloadV2 => ({
    ...v2Event,
    id: `evt_${String(i).padStart(26, '0')}`,
    position: 1 + Math.floor(next() * 2 ** 40),
    actor: pick(texts) + String(i),
    resource: next() < 0.3 ? null : pick(texts),
    context: next() < 0.2 ? null : randomContext(),
  });
  const randomFields = (e: EventHashPayloadV2): string[] => {
    // A member named "" is erased by context.* alone: `context.` names nothing (docs/contract.md §17).
    const members = Object.keys(e.context ?? {})
      .filter((m) => m !== '')
      .map((m) => `context.${m}`);
    return ['actor', 'resource', 'context.*', 'context.absent', ...members].filter(() => next() < 0.25);
  };
  const saltsByPath = ({ salts }: HashingV2): Array<[string, string | undefined]> => [
    ['actor', salts.actor],
    ['resource', salts.resource],
    ...Object.entries(salts.context ?? {}).map(([m, salt]): [string, string] => [`context.${m}`, salt]),
  ];

  it(`holds for 400 random events, each erased in 3 random steps (seed ${SEED})`, () => {
    let erasures = 0;
    for (let i = 0; i < 400; i++) {
      let event = randomEvent(i);
      let hashing: HashingV2 = { version: 2, salts: saltsFor(event), commitments: {} };
      const original = computeEventHashV2(event, hashing);
      expect(independentHash(event, hashing)).toBe(original);
      const erasedSoFar = new Set<string>();

      for (let step = 0; step < 3; step++) {
        const saltOf = new Map(saltsByPath(hashing));
        const result = erase(event, hashing, randomFields(event));
        ({ event, hashing } = result);
        expect(computeEventHashV2(event, hashing)).toBe(original);
        expect(independentHash(event, hashing)).toBe(original);
        result.erased.forEach((path) => erasedSoFar.add(path));
        erasures += result.erased.length;
        expect(erasedFields(hashing)).toEqual([...erasedSoFar].sort());
        const remains = JSON.stringify(result);
        for (const path of result.erased) {
          expect(remains).not.toContain(saltOf.get(path));
          if (path === 'actor' || path === 'resource') expect(event[path]).toBeNull();
          else expect(Object.hasOwn(event.context ?? {}, path.slice('context.'.length))).toBe(false);
        }
      }
    }
    expect(erasures).toBeGreaterThan(600); // the erasures did happen
  });
});

describe('erasure, dictionary attack on what remains', () => {
  // 10,000 plausible e-mail addresses: 40 first names × 25 last names × 10 domains.
  const first =
    'anna ben carla dan eva finn greta hugo ida jan kim lea max nina otto paula quentin rosa sven tina ulla vera will xenia yann zoe adam berta chris dora emil frida georg hanna igor jana karl luisa mia noah'.split(
      ' ',
    );
  const last =
    'muller schmidt schneider fischer weber meyer wagner becker schulz hoffmann koch richter klein wolf schroder neumann schwarz zimmermann braun kruger hofmann hartmann lange schmitt werner'.split(
      ' ',
    );
  const domains = [
    'example.com',
    'example.org',
    'example.net',
    'mail.test',
    'corp.test',
    'web.test',
    'post.test',
    'inbox.test',
    'uni.test',
    'gov.test',
  ];
  const dictionary = first.flatMap((f) => last.flatMap((l) => domains.map((d) => `${f}.${l}@${d}`)));
  const victim = 'zoe.muller@example.com';
  const colleague = 'hugo.braun@corp.test';

  const event: EventHashPayloadV2 = {
    ...v2Event,
    actor: victim,
    context: { ...v2Event.context, email: colleague, ip: '203.0.113.7' },
  };
  const hashing: HashingV2 = { version: 2, salts: saltsFor(event), commitments: {} };
  let after: ErasureResult<EventHashPayloadV2>;
  beforeAll(() => {
    after = erase(event, hashing, ['actor', 'context.email']);
  });

  /** Every dictionary value whose digest, salted with any 32-hex string found in `remains` or with none, is `target`. */
  function identify(target: string, remains: string): string[] {
    const salts = new Set([...(remains.match(/[0-9a-f]{32}/g) ?? []), '', '0'.repeat(32)]);
    return dictionary.filter(
      (v) =>
        sha256(v) === target ||
        sha256(canonicalJson(v)) === target ||
        [...salts].some((salt) => sha256(canonicalJson([salt, v])) === target),
    );
  }

  it('has 10,000 distinct values, the erased ones among them', () => {
    expect(new Set(dictionary).size).toBe(10_000);
    expect(dictionary).toContain(victim);
    expect(dictionary).toContain(colleague);
  });

  it('identifies nothing from the commitments that remain', () => {
    const remains = JSON.stringify(after);
    expect(remains).not.toContain(victim);
    expect(remains).not.toContain(colleague);
    const { actor, context } = after.hashing.commitments;
    expect(identify(actor ?? '', remains)).toEqual([]);
    expect(identify(context?.email ?? '', remains)).toEqual([]);
  });

  it('would identify the values had the salts been kept, or had the hash been unsalted', () => {
    const leaky = JSON.stringify({ ...after, hashing: { ...after.hashing, salts: hashing.salts } });
    const { actor, context } = after.hashing.commitments;
    expect(identify(actor ?? '', leaky)).toEqual([victim]);
    expect(identify(context?.email ?? '', leaky)).toEqual([colleague]);
    expect(identify(sha256(canonicalJson(victim)), JSON.stringify(after))).toEqual([victim]);
  });
});

function catchError(run: () => unknown): unknown {
  try {
    run();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('a malformed hashing (attack finding 8)', () => {
  const malformed: unknown[] = [
    { version: 2, commitments: { actor: 'c0ffee' } },
    { version: 2, salts: null, commitments: {} },
    { version: 2, salts: {}, commitments: [] },
    { version: 2, salts: { context: 'x' }, commitments: {} },
    { version: 2, salts: {}, commitments: { context: 7 } },
    null,
  ];
  it.each(malformed.map((h) => [JSON.stringify(h), h]))(
    '%s: a HashingV2Error naming the part, never a TypeError',
    (_, h) => {
      for (const run of [
        () => computeEventHashV2(v1Event, h as HashingV2),
        () => hashPayloadV2Of(v1Event, h as HashingV2),
      ]) {
        expect(run).toThrow(HashingV2Error);
        expect(run).toThrow(/hashing(\.(salts|commitments)(\.context)?)? must be an object/);
      }
      expect(erasedFields(h as HashingV2)).toEqual([]);
    },
  );
});
