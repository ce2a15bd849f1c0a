import { erasedValuesOf, holdsErasedText, queryQuotes, quotingMembers } from './quoted-values';

describe('the `_audit` members that quote an erased value', () => {
  const zoe = erasedValuesOf('actor', [], 'zoe@example.com');
  const pin = erasedValuesOf('context', ['pin'], 919180);
  const tricky = [
    ...erasedValuesOf('resource', [], 'CORP\\zed'),
    ...erasedValuesOf('context', ['q'], 'Zed "the" Z'),
    ...erasedValuesOf('actor', [], 'z8b'),
  ];

  it('take each leaf of an erased field with where it was, array indices left out', () => {
    expect(erasedValuesOf('context', ['who'], { name: 'Zoe', tags: ['a', 1], ok: true })).toEqual([
      { field: 'context', path: ['who', 'name'], value: 'Zoe' },
      { field: 'context', path: ['who', 'tags'], value: 'a' },
      { field: 'context', path: ['who', 'tags'], value: 1 },
      { field: 'context', path: ['who', 'ok'], value: true },
    ]);
  });

  it('find a q term that selects by an erased value of that field: any spelling, a prefix, negated too', () => {
    expect(queryQuotes('actor:"zoe@example.com" action:a', zoe)).toBe(true);
    expect(queryQuotes('-actor:zoe@example.com', zoe)).toBe(true);
    expect(queryQuotes('actor:zoe@ex*', zoe)).toBe(true);
    expect(queryQuotes('context.pin:919.18e3', pin)).toBe(true);
    expect(queryQuotes('context.pin:919180', pin)).toBe(true);
    expect(queryQuotes('resource:"CORP\\\\zed"', tricky)).toBe(true);
    expect(queryQuotes('context.q:"Zed \\"the\\" Z"', tricky)).toBe(true);
    expect(queryQuotes('actor:z8b', tricky)).toBe(true);
  });

  it('leave a term of another field or value alone', () => {
    expect(queryQuotes('actor:zoe@example.org', zoe)).toBe(false);
    expect(queryQuotes('actor:z8b', pin)).toBe(false);
    expect(queryQuotes('context.pin:919181', pin)).toBe(false);
    expect(queryQuotes('context.other:919180', pin)).toBe(false);
  });

  it('find an erased text of 4 characters or more anywhere in a q, and any erased string in a q the parser refuses', () => {
    expect(queryQuotes('actor:(zoe@example.com)', zoe)).toBe(true);
    expect(queryQuotes('actor:"z8b', tricky)).toBe(true);
    expect(queryQuotes('actor:(z8b)', tricky)).toBe(false);
  });

  it('look only at the selections `_audit` records: filters and q, never a key’s name or a hold’s reason', () => {
    const exported = { format: 'json', filters: { actor: 'zoe@example.com', action: null, q: null } };
    expect(quotingMembers(exported, zoe)).toEqual(['filters']);
    expect(quotingMembers({ filters: { actor: null, q: 'context.pin:919180' } }, pin)).toEqual(['filters']);
    expect(quotingMembers({ name: 'destination', q: 'actor:zoe@example.com' }, zoe)).toEqual(['q']);
    // A decoy event whose erased values equal other members' values reaches none of them.
    const decoy = [...erasedValuesOf('context', ['a'], 'subpoena 42-A'), ...erasedValuesOf('context', ['c'], 400)];
    expect(quotingMembers({ reason: 'subpoena 42-A', days: 400, name: 'subpoena 42-A' }, decoy)).toEqual([]);
  });

  it('find an erased text of 4 characters or more in a reason, not inside a longer word', () => {
    expect(holdsErasedText('GDPR request of zoe@example.com', zoe)).toBe(true);
    expect(holdsErasedText('request xzoe@example.comx', zoe)).toBe(false);
    expect(holdsErasedText('ticket z8b', tricky)).toBe(false);
  });
});
