import { bucketLabel, defaultRange, tickEvery } from './stats-range';

describe('the Statistics page’s ranges and labels', () => {
  it('takes 7 UTC days by default, today included, so that a daily chart has 7 bars', () => {
    const now = Date.parse('2026-12-07T18:04:40.123Z');
    expect(defaultRange('day', now)).toEqual({ after: '2026-12-01T00:00:00.000Z', before: '2026-12-07T18:05:00.000Z' });
    expect(defaultRange('hour', now)).toEqual({
      after: '2026-12-06T18:00:00.000Z',
      before: '2026-12-07T18:05:00.000Z',
    });
  });

  it('labels as many ticks as fit, at least every one when they all do', () => {
    expect(tickEvery(7, 600, 52)).toBe(1);
    expect(tickEvery(25, 260, 64)).toBe(7);
    expect(tickEvery(0, 600, 52)).toBe(1);
  });

  it('labels a UTC day by its date and an hour with its zone', () => {
    expect(bucketLabel('2026-12-07T00:00:00.000Z', 'day', 'utc')).toEqual({ short: 'Dec 7', full: '2026-12-07' });
    expect(bucketLabel('2026-12-07T14:00:00.000Z', 'hour', 'utc')).toEqual({
      short: 'Dec 7 14:00',
      full: '2026-12-07 14:00:00 UTC',
    });
  });
});
