import { toEventFilters } from './event-filters';

describe('toEventFilters', () => {
  it('reads the list’s exclusive after and before to the stored millisecond that keeps the same events', () => {
    // An event stored at .000 is before .0005: `before=…0005` keeps it, `after=…0005` does not.
    const filters = toEventFilters({ after: '2026-01-01T00:00:00.0005Z', before: '2026-01-01T00:00:00.0005Z' });
    expect(filters.after?.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(filters.before?.toISOString()).toBe('2026-01-01T00:00:00.001Z');
    const whole = toEventFilters({ after: '2026-01-01T00:00:00.123Z', before: '2026-01-01T00:00:00.123000Z' });
    expect([whole.after?.toISOString(), whole.before?.toISOString()]).toEqual([
      '2026-01-01T00:00:00.123Z',
      '2026-01-01T00:00:00.123Z',
    ]);
  });
});
