import { parseSearchQuery } from '@app/common';
import { rollupRange, splitDays } from './event-counts';

const at = (text: string) => Date.parse(text);
const period = (after: string, before: string, q?: string) => ({
  after: new Date(after),
  before: new Date(before),
  inclusive: true,
  search: q === undefined ? undefined : parseSearchQuery(q).terms,
});

describe('rollupRange', () => {
  it('is the inclusive period as [after, before + 1 ms), narrowed by time terms, negated ones too', () => {
    const p = period('2026-03-01T10:30:00.000Z', '2026-03-05T00:00:00.000Z');
    expect(rollupRange(p)).toEqual({ from: at('2026-03-01T10:30:00.000Z'), to: at('2026-03-05T00:00:00.001Z') });
    const narrowed = period(
      '2026-03-01T00:00:00.000Z',
      '2026-03-05T00:00:00.000Z',
      'timestamp:>2026-03-02T00:00:00Z -timestamp:>=2026-03-04T00:00:00Z action:a chain:x -chain_id:y action:b*',
    );
    expect(rollupRange(narrowed)).toEqual({ from: at('2026-03-02T00:00:00.001Z'), to: at('2026-03-04T00:00:00.000Z') });
    const conflicting = period('2026-03-01T00:00:00Z', '2026-03-05T00:00:00Z', 'timestamp:<2026-02-01T00:00:00Z');
    expect(rollupRange(conflicting)).toEqual({ from: at('2026-03-01T00:00:00Z'), to: at('2026-03-01T00:00:00Z') });
  });

  it('is null for what a rollup row does not keep, or without an inclusive period', () => {
    const p = period('2026-03-01T00:00:00Z', '2026-03-02T00:00:00Z');
    expect(rollupRange({ ...p, actor: 'alice' })).toBeNull();
    expect(rollupRange({ ...p, resource: 'r' })).toBeNull();
    for (const q of ['actor:alice', '-resource:r', 'context.ip:"1"'])
      expect(rollupRange({ ...p, search: parseSearchQuery(q).terms })).toBeNull();
    expect(rollupRange({ ...p, inclusive: false })).toBeNull();
    expect(rollupRange({ after: p.after })).toBeNull();
  });
});

describe('splitDays', () => {
  it('takes the whole UTC days from the rollup and the parts of a day around them from the events, in order', () => {
    const range = { from: at('2026-03-01T10:30:00.000Z'), to: at('2026-03-04T02:00:00.001Z') };
    expect(splitDays(range)).toEqual([
      { rollup: false, from: range.from, to: at('2026-03-02T00:00:00Z') },
      { rollup: true, from: at('2026-03-02T00:00:00Z'), to: at('2026-03-04T00:00:00Z') },
      { rollup: false, from: at('2026-03-04T00:00:00Z'), to: range.to },
    ]);
    const days = { from: at('2026-03-01T00:00:00Z'), to: at('2026-03-03T00:00:00Z') };
    expect(splitDays(days)).toEqual([{ rollup: true, ...days }]);
    const dayAndAfter = { from: at('2026-03-01T00:00:00Z'), to: at('2026-03-02T00:00:00.001Z') };
    expect(splitDays(dayAndAfter)).toEqual([
      { rollup: true, from: dayAndAfter.from, to: at('2026-03-02T00:00:00Z') },
      { rollup: false, from: at('2026-03-02T00:00:00Z'), to: dayAndAfter.to },
    ]);
  });

  it('leaves a range without a whole day to the events, and gives nothing for an empty one', () => {
    const acrossMidnight = { from: at('2026-03-01T00:00:00.001Z'), to: at('2026-03-02T23:59:59.999Z') };
    expect(splitDays(acrossMidnight)).toEqual([{ rollup: false, ...acrossMidnight }]);
    const beforeEpoch = { from: at('1969-12-30T12:00:00Z'), to: at('1970-01-01T00:00:00Z') };
    expect(splitDays(beforeEpoch)).toEqual([
      { rollup: false, from: beforeEpoch.from, to: at('1969-12-31T00:00:00Z') },
      { rollup: true, from: at('1969-12-31T00:00:00Z'), to: beforeEpoch.to },
    ]);
    expect(splitDays({ from: 5, to: 5 })).toEqual([]);
  });
});
