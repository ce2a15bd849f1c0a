import {
  formatSearchTerm,
  MAX_SEARCH_QUERY_LENGTH,
  parseSearchQuery,
  SearchQueryError,
  SearchTerm,
  TEXT_FIELDS,
} from './search-query';
import { like } from '../testing/like.fixture';

/** A small seeded generator (mulberry32), so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ALPHABET = ['a', 'Z', '0', '.', '-', '_', ' ', ':', '"', '\\', '*', 'é', '😀', '>', '=', '<', '\t'];

function generator(seed: number) {
  const next = random(seed);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const text = (min: number, max: number): string =>
    Array.from({ length: min + Math.floor(next() * (max - min + 1)) }, () => pick(ALPHABET)).join('');
  const segment = (): string => text(1, 6).replace(/[ \t.:"\\]/g, 'x');
  const term = (): SearchTerm => {
    const negated = next() < 0.3;
    switch (pick(['text', 'time', 'context'] as const)) {
      case 'text': {
        const field = pick(TEXT_FIELDS);
        const prefix = ['actor', 'action', 'resource'].includes(field) && next() < 0.4;
        return { kind: 'text', field, value: text(1, 12), prefix, negated };
      }
      case 'time':
        return {
          kind: 'time',
          comparison: pick(['>=', '>', '<=', '<'] as const),
          at: new Date(Date.UTC(1970 + Math.floor(next() * 200), 0, 1) + Math.floor(next() * 1e10)),
          negated,
        };
      case 'context':
        return {
          kind: 'context',
          path: Array.from({ length: 1 + Math.floor(next() * 3) }, segment),
          value:
            next() < 0.5
              ? { kind: 'string', value: text(0, 10) }
              : { kind: 'literal', json: pick(['0', '-1.5e3', '4711', 'true', 'false', 'null']) },
          negated,
        };
    }
  };
  return { next, text, term };
}

describe('parseSearchQuery', () => {
  it('reads each kind of term', () => {
    expect(
      parseSearchQuery(
        ' action:order.* -actor:"system:cron" resource:"a \\"b\\" \\\\"  timestamp:>=2026-11-01T00:00:00Z ' +
          'context.order.id:4711 context.note:"4711" -context.flag:null chain:default chain_id:chn_01',
      ).terms,
    ).toEqual([
      { kind: 'text', field: 'action', value: 'order.', prefix: true, negated: false },
      { kind: 'text', field: 'actor', value: 'system:cron', prefix: false, negated: true },
      { kind: 'text', field: 'resource', value: 'a "b" \\', prefix: false, negated: false },
      { kind: 'time', comparison: '>=', at: new Date('2026-11-01T00:00:00Z'), negated: false },
      { kind: 'context', path: ['order', 'id'], value: { kind: 'literal', json: '4711' }, negated: false },
      { kind: 'context', path: ['note'], value: { kind: 'string', value: '4711' }, negated: false },
      { kind: 'context', path: ['flag'], value: { kind: 'literal', json: 'null' }, negated: true },
      { kind: 'text', field: 'chain', value: 'default', prefix: false, negated: false },
      { kind: 'text', field: 'chain_id', value: 'chn_01', prefix: false, negated: false },
    ]);
  });

  it('takes a star inside a value, or quoted, as a character', () => {
    expect(parseSearchQuery('actor:a*b action:"x*"').terms).toEqual([
      { kind: 'text', field: 'actor', value: 'a*b', prefix: false, negated: false },
      { kind: 'text', field: 'action', value: 'x*', prefix: false, negated: false },
    ]);
  });

  it('reads time terms as the list reads after/before (years 0000–9999, leap seconds, offsets)', () => {
    const at = (text: string) => {
      const [term] = parseSearchQuery(`timestamp:>=${text}`).terms;
      return term!.kind === 'time' ? term!.at.toISOString() : null;
    };
    expect(at('0099-10-11T14:22:16Z')).toBe('0099-10-11T14:22:16.000Z');
    expect(at('2016-12-31T23:59:60Z')).toBe('2017-01-01T00:00:00.000Z');
    expect(at('2026-11-01T01:00:00+01:00')).toBe('2026-11-01T00:00:00.000Z');
    expect(at('2026-11-01')).toBe('2026-11-01T00:00:00.000Z');
  });

  it('reads a time with digits below the millisecond as the stored millisecond that keeps the same events', () => {
    const at = (comparison: string, text: string) => {
      const [term] = parseSearchQuery(`timestamp:${comparison}${text}`).terms;
      return term!.kind === 'time' ? term!.at.toISOString() : null;
    };
    // An event at .000 is before .0005: `<` keeps it, `>=` does not; `>` and `<=` of .0005 are those of .000.
    expect(at('<', '2026-01-01T00:00:00.0005Z')).toBe('2026-01-01T00:00:00.001Z');
    expect(at('>=', '2026-01-01T00:00:00.0005Z')).toBe('2026-01-01T00:00:00.001Z');
    expect(at('>', '2026-01-01T00:00:00.0005Z')).toBe('2026-01-01T00:00:00.000Z');
    expect(at('<=', '2026-01-01T00:00:00.0005Z')).toBe('2026-01-01T00:00:00.000Z');
    for (const comparison of ['<', '>=', '>', '<='])
      expect(at(comparison, '2026-01-01T00:00:00.000000000Z')).toBe('2026-01-01T00:00:00.000Z');
    expect(at('<', '9999-12-31T23:59:59.9999Z')).toBe('9999-12-31T23:59:59.999Z');
  });

  it("keeps every number PostgreSQL's numeric holds, down to its limits, and a quoted one as a string", () => {
    // The edges PostgreSQL 15 and PGlite (18) accept in `'{"n":…}'::jsonb`; one step further is refused below.
    for (const json of [
      '1e131071',
      '9.9e131071',
      '123456789e131063',
      '1e-16383',
      '1.5e-16382',
      '0e999999',
      '-0',
      '1e1000',
    ]) {
      expect(parseSearchQuery(`context.n:${json}`).terms).toEqual([
        { kind: 'context', path: ['n'], value: { kind: 'literal', json }, negated: false },
      ]);
    }
    expect(parseSearchQuery('context.n:"1e999999"').terms).toEqual([
      { kind: 'context', path: ['n'], value: { kind: 'string', value: '1e999999' }, negated: false },
    ]);
  });

  it('reads schema:invalid, schema:valid and schema:violated (the same as invalid), negated too; nothing else', () => {
    expect(parseSearchQuery('schema:invalid -schema:valid schema:violated').terms).toEqual([
      { kind: 'schema', valid: false, negated: false },
      { kind: 'schema', valid: true, negated: true },
      { kind: 'schema', valid: false, negated: false },
    ]);
    expect(() => parseSearchQuery('schema:maybe')).toThrow(/schema takes invalid or valid \(at offset 7\)/);
    expect(() => parseSearchQuery('schema:"invalid"')).toThrow(/schema takes invalid or valid/);
    expect(() => parseSearchQuery('schema:inv*')).toThrow(/schema takes invalid or valid/);
    expect(() => parseSearchQuery('schema.x:invalid')).toThrow(/at offset/);
    expect(formatSearchTerm({ kind: 'schema', valid: false, negated: true })).toBe('-schema:invalid');
  });

  it('is empty for an empty or blank q', () => {
    expect(parseSearchQuery('').terms).toEqual([]);
    expect(parseSearchQuery('  \t ').terms).toEqual([]);
  });

  it.each([
    ['foo:bar', 0, 'unknown field "foo"'],
    ['actor:alice  foo:bar', 13, 'unknown field "foo"'],
    ['actor:', 6, "needs a value after 'actor:'"],
    ['actor:a -chain_id:', 18, "needs a value after '-chain_id:'"],
    ['actor:"open', 11, 'needs a closing " for the value quoted at offset 6'],
    ['actor', 5, "needs ':' and a value after the field name 'actor'"],
    ['actor:a -', 9, "needs a field name after '-'"],
    ['chain:x*', 7, 'chain takes no prefix'],
    ['context.a:1*', 11, 'context values take no prefix'],
    ['timestamp:2026-01-01', 10, 'timestamp takes a comparison'],
    ['timestamp:>yesterday', 11, 'ISO 8601'],
    ['timestamp:>2026-02-30T00:00:00Z', 11, 'ISO 8601'],
    ['actor:>=x', 6, 'only timestamp takes >='],
    ['actor:""', 6, 'actor needs a value'],
    ['actor:"a\u0000"', 6, 'U+0000'],
    ['actor:a"b', 7, `has '"' where a new term (field:value) or a space should be`],
    [`actor:${'x'.repeat(257)}`, 6, 'at most 256 characters'],
    [`${'actor:a '.repeat(33)}`, 256, 'at most 32 terms'],
    ['x'.repeat(MAX_SEARCH_QUERY_LENGTH + 1), MAX_SEARCH_QUERY_LENGTH, 'at most 2000 characters'],
    ['context.n:1e999999', 10, 'the number overflows'],
    ['actor:a -context.n:-1e999999', 19, 'the number overflows'],
    ['context.n:1e131072', 10, 'the number overflows'],
    ['context.n:123456789e131064', 10, 'the number overflows'],
    ['context.n:1e-16384', 10, 'the number underflows'],
    ['context.n:0.0000e-16380', 10, 'the number underflows'],
    ['context.n:0e-20000', 10, 'the number underflows'],
    ['context.n:0e1073741823', 10, "the number's exponent is out of range"],
    ['context.n:1e-99999999999999999999', 10, "the number's exponent is out of range"],
  ])('refuses %j at offset %i', (q, offset, message) => {
    let error: unknown;
    try {
      parseSearchQuery(q);
    } catch (thrown) {
      error = thrown;
    }
    expect(error).toBeInstanceOf(SearchQueryError);
    expect((error as SearchQueryError).offset).toBe(offset);
    expect((error as SearchQueryError).message).toContain(message);
    expect((error as SearchQueryError).message).toContain(`(at offset ${offset})`);
  });

  it('gives back every generated query it formats (round trip)', () => {
    for (let seed = 1; seed <= 500; seed++) {
      const { next, term } = generator(seed);
      const terms = Array.from({ length: 1 + Math.floor(next() * 5) }, term);
      const text = terms.map(formatSearchTerm).join(next() < 0.5 ? ' ' : ' \t ');
      expect({ seed, terms: parseSearchQuery(text).terms }).toEqual({ seed, terms });
    }
  });

  it('throws nothing but SearchQueryError for random text, and its offset lies within the text', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const { text } = generator(seed);
      const q = text(0, 40);
      try {
        parseSearchQuery(q);
      } catch (error) {
        expect({ seed, q, error }).toEqual({ seed, q, error: like.any(SearchQueryError) });
        expect((error as SearchQueryError).offset).toBeLessThanOrEqual(q.length);
      }
    }
  });
});
