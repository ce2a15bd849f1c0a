import { parseSearchQuery } from '@app/common';
import { rollupRange, splitRange } from './event-counts';

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

describe('splitRange', () => {
  it('takes whole days, then whole hours around them, then the rest from the events, in order', () => {
    const range = { from: at('2026-03-01T10:30:00.000Z'), to: at('2026-03-04T02:00:00.001Z') };
    expect(splitRange(range, ['day', 'hour'])).toEqual([
      { unit: null, from: range.from, to: at('2026-03-01T11:00:00Z') },
      { unit: 'hour', from: at('2026-03-01T11:00:00Z'), to: at('2026-03-02T00:00:00Z') },
      { unit: 'day', from: at('2026-03-02T00:00:00Z'), to: at('2026-03-04T00:00:00Z') },
      { unit: 'hour', from: at('2026-03-04T00:00:00Z'), to: at('2026-03-04T02:00:00Z') },
      { unit: null, from: at('2026-03-04T02:00:00Z'), to: range.to },
    ]);
  });

  it('falls to finer units when no whole bucket fits, and gives nothing for an empty range', () => {
    const inHour = { from: at('2026-03-01T10:00:00.001Z'), to: at('2026-03-01T10:59:59.999Z') };
    expect(splitRange(inHour, ['day', 'hour'])).toEqual([{ unit: null, ...inHour }]);
    const hours = { from: at('2026-03-01T10:00:00Z'), to: at('2026-03-01T12:00:00Z') };
    expect(splitRange(hours, ['day', 'hour'])).toEqual([{ unit: 'hour', ...hours }]);
    expect(splitRange({ from: 5, to: 5 }, ['day', 'hour'])).toEqual([]);
    const days = { from: at('2026-03-01T00:00:00Z'), to: at('2026-03-03T00:00:00Z') };
    expect(splitRange(days, ['hour'])).toEqual([{ unit: 'hour', ...days }]);
  });
});
