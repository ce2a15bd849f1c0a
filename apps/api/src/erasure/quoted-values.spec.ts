import { needleOf, quotes, quotingMembers, valuesOf } from './quoted-values';

describe('the `_audit` members that quote an erased value', () => {
  it('take every string and number inside an erased field, not booleans, nulls or member names', () => {
    expect(valuesOf('zoe@example.com')).toEqual(['zoe@example.com']);
    expect(valuesOf({ pin: 4821, tags: ['a b', true, null], name: '' })).toEqual(['4821', 'a b']);
    expect(valuesOf(null)).toEqual([]);
  });

  it('find a value as a whole text, inside a longer one where it is not part of a word, and a short one only as a term’s value', () => {
    expect(quotes('zoe@example.com', 'zoe@example.com')).toBe(true);
    expect(quotes('actor:"zoe@example.com" action:a', 'zoe@example.com')).toBe(true);
    expect(quotes('context.pin:4821', '4821')).toBe(true);
    expect(quotes('148210', '4821')).toBe(false);
    expect(quotes('xzoe@example.com', 'zoe@example.com')).toBe(false);
    // Short values: the 12 of a date is not a quote, a term's value is.
    expect(quotes('2026-12-07T00:00:00.000Z', '12')).toBe(false);
    expect(quotes('context.n:12 actor:x', '12')).toBe(true);
    expect(quotes('12', '12')).toBe(true);
  });

  it('name the top-level members whose value holds one, at any depth', () => {
    const context = {
      format: 'json',
      after: '2026-12-01T00:00:00.000Z',
      filters: { actor: 'zoe@example.com', action: null, q: null },
      q: 'context.pin:4821',
    };
    expect(quotingMembers(context, ['zoe@example.com', '4821'])).toEqual(['filters', 'q']);
    expect(quotingMembers(context, ['nobody@example.com'])).toEqual([]);
  });

  it('look for a value as jsonb writes it in its text', () => {
    expect(needleOf('say "hi"\\')).toBe('say \\"hi\\"\\\\');
  });
});
