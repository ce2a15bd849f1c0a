import { canonicalJson, unstorableReason } from './canonical-json';

describe('canonicalJson', () => {
  const sut = canonicalJson;

  describe('member order', () => {
    it('sorts members by key, whatever the insertion order', () => {
      expect(sut({ b: 1, a: 2, c: 3 })).toBe('{"a":2,"b":1,"c":3}');
      expect(sut({ c: 3, a: 2, b: 1 })).toBe('{"a":2,"b":1,"c":3}');
    });

    it('sorts integer-like keys as strings, not in JavaScript property order', () => {
      // Object.keys yields "9", "10", "a"; UTF-16 order is "10" < "9" < "a".
      expect(sut({ a: 3, 9: 2, 10: 1 })).toBe('{"10":1,"9":2,"a":3}');
    });

    it('sorts at every nesting level, inside arrays too', () => {
      const value = { z: { y: [{ d: 1, c: { f: 2, e: 3 } }], x: null }, a: [[{ b: 1, a: 2 }]] };
      expect(sut(value)).toBe('{"a":[[{"a":2,"b":1}]],"z":{"x":null,"y":[{"c":{"e":3,"f":2},"d":1}]}}');
    });

    it('keeps array order', () => {
      expect(sut([3, 1, 2, 'b', 'a'])).toBe('[3,1,2,"b","a"]');
    });

    it('sorts by UTF-16 code units, not by code points (RFC 8785 §3.2.3 example)', () => {
      const value = {
        '\u20ac': 'Euro Sign',
        '\r': 'Carriage Return',
        '\ufb33': 'Hebrew Letter Dalet With Dagesh',
        '1': 'One',
        '\ud83d\ude00': 'Emoji: Grinning Face',
        '\u0080': 'Control',
        '\u00f6': 'Latin Small Letter O With Diaeresis',
      };
      expect(sut(value)).toBe(
        '{"\\r":"Carriage Return","1":"One","\u0080":"Control",' +
          '"\u00f6":"Latin Small Letter O With Diaeresis","€":"Euro Sign",' +
          '"😀":"Emoji: Grinning Face","\ufb33":"Hebrew Letter Dalet With Dagesh"}',
      );
    });

    it('puts an astral key before a high BMP key (U+1F600 > U+FF61 by code point, D83D < FF61 by unit)', () => {
      expect(sut({ '\uff61': 1, '\ud83d\ude00': 2 })).toBe('{"😀":2,"｡":1}');
      expect(sut({ '\u20ac': 1, '\ud83d\ude00': 2 })).toBe('{"€":1,"😀":2}');
    });

    it('serializes an own "__proto__" member like any other key', () => {
      expect(sut(JSON.parse('{"b":2,"__proto__":1}'))).toBe('{"__proto__":1,"b":2}');
    });
  });

  describe('strings', () => {
    it('keeps non-ASCII characters literal instead of \\u-escaping them', () => {
      const text = sut({ s: 'café € 😀 \u007f \u2028 \u0080' });
      expect(text).toBe('{"s":"café € 😀 \u007f \u2028 \u0080"}');
      expect(text).not.toContain('\\u');
    });

    it('escapes control characters, with the short forms where JSON has them', () => {
      expect(sut('\b\f\n\r\t')).toBe('"\\b\\f\\n\\r\\t"');
      expect(sut('\u0001\u000f\u001f')).toBe('"\\u0001\\u000f\\u001f"');
    });

    it('escapes quote and backslash but not the solidus (RFC 8785 §3.2.2.2 example)', () => {
      expect(sut('\u20ac$\u000F\u000aA\'\u0042\u0022\u005c\\"/')).toBe('"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"');
    });
  });

  describe('numbers (ECMAScript Number serialization)', () => {
    it.each([
      [1e21, '1e+21'],
      [1e-7, '1e-7'],
      [-0, '0'],
      [0.1, '0.1'],
      [100, '100'],
      [1.5e300, '1.5e+300'],
      [4.5, '4.5'],
      [0.002, '0.002'],
      [1e-6, '0.000001'],
      [333333333.33333329, '333333333.3333333'],
      [-1.25, '-1.25'],
      [2 ** 53 - 1, '9007199254740991'],
    ])('%p -> %s', (value, expected) => {
      expect(sut(value)).toBe(expected);
      expect(sut({ n: value })).toBe(`{"n":${expected}}`);
    });
  });

  describe('literals and nesting', () => {
    it('writes null, booleans, empty containers and nested mixes without whitespace', () => {
      const value = { t: true, f: false, n: null, o: {}, a: [], m: [1, [2, [3, { k: 'v' }]], { x: [] }] };
      expect(sut(value)).toBe('{"a":[],"f":false,"m":[1,[2,[3,{"k":"v"}]],{"x":[]}],"n":null,"o":{},"t":true}');
    });
  });

  describe('values without a JSON representation', () => {
    it('throws for undefined', () => {
      expect(() => sut(undefined)).toThrow(TypeError);
    });

    it('throws for a function', () => {
      expect(() => sut(() => 1)).toThrow(TypeError);
    });

    it('throws for NaN and Infinity', () => {
      expect(() => sut(NaN)).toThrow();
      expect(() => sut({ n: Infinity })).toThrow();
    });
  });
});

describe('unstorableReason', () => {
  const sut = unstorableReason;

  it('accepts plain JSON', () => {
    expect(sut({ a: 'café 😀', b: [1, 1.5, null, true, { c: 'x' }], d: {} })).toBeNull();
    expect(sut(null)).toBeNull();
  });

  describe('NUL', () => {
    it('rejects NUL in a value, at any depth', () => {
      expect(sut('a\u0000b')).toMatch(/NUL/);
      expect(sut({ a: 'x\u0000' })).toMatch(/NUL/);
      expect(sut({ a: [{ b: ['ok', '\u0000'] }] })).toMatch(/NUL/);
    });

    it('rejects NUL in a key, at any depth', () => {
      expect(sut({ 'k\u0000': 1 })).toMatch(/NUL/);
      expect(sut({ a: { '\u0000': 'v' } })).toMatch(/NUL/);
    });
  });

  describe('surrogates', () => {
    it.each([
      ['a lone high surrogate at the end', 'a\ud83d'],
      ['a lone high surrogate before a letter', '\ud83dx'],
      ['a high surrogate followed by another high', '\ud83d\ud83d\ude00'],
      ['a lone low surrogate at the start', '\ude00x'],
      ['a lone low surrogate after a complete pair', '\ud83d\ude00\ude00'],
      ['a reversed pair', '\ude00\ud83d'],
    ])('rejects %s, in a value and in a key', (_label, text) => {
      expect(sut({ v: text })).toMatch(/surrogate/);
      expect(sut({ [text]: 1 })).toMatch(/surrogate/);
    });

    it('accepts valid surrogate pairs', () => {
      expect(sut({ '\ud83d\ude00': '\ud83d\ude00\udbff\udfff x \ud800\udc00' })).toBeNull();
    });
  });

  describe('numbers', () => {
    it.each([2 ** 53, -(2 ** 53), 1e21, 1.5e300])('rejects the unsafe integer %p', (n) => {
      expect(sut({ n })).toMatch(/2\^53/);
    });

    it.each([2 ** 53 - 1, -(2 ** 53 - 1), 0, -0, 1.5, 1e-7, 0.1])('accepts %p', (n) => {
      expect(sut({ n })).toBeNull();
    });

    it.each([NaN, Infinity, -Infinity])('rejects %p', (n) => {
      expect(sut({ n })).toMatch(/finite/);
      expect(sut([n])).toMatch(/finite/);
    });
  });

  describe('non-JSON values', () => {
    it.each([
      ['undefined', undefined],
      ['a function', () => 1],
      ['a bigint', BigInt(1)],
      ['a symbol', Symbol('s')],
    ])('rejects %s', (_label, value) => {
      expect(sut({ v: value })).toMatch(/unsupported/);
    });
  });

  describe('maxDepth (the context object itself is depth 1)', () => {
    const nested = (levels: number): unknown => {
      let value: unknown = 1;
      for (let i = 0; i < levels; i++) value = { k: value };
      return value;
    };

    it('accepts exactly maxDepth levels and rejects one more', () => {
      expect(sut({ a: { b: 1 } }, 0, 2)).toBeNull();
      expect(sut({ a: { b: { c: 1 } } }, 0, 2)).toMatch(/deeper than 2/);
      expect(sut({}, 0, 1)).toBeNull();
      expect(sut({ a: {} }, 0, 1)).toMatch(/deeper than 1/);
    });

    it('counts arrays as levels', () => {
      expect(sut({ a: [1] }, 0, 2)).toBeNull();
      expect(sut({ a: [[1]] }, 0, 2)).toMatch(/deeper than 2/);
    });

    it('holds at the contract limit of 32', () => {
      expect(sut(nested(32), 0, 32)).toBeNull();
      expect(sut(nested(33), 0, 32)).toMatch(/deeper than 32/);
    });

    it('has no limit by default', () => {
      expect(sut(nested(200))).toBeNull();
    });
  });
});
