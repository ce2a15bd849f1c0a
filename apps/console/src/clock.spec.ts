import { ageText, formatInstant, fromField, toField } from './clock';

describe('the console’s one clock (UTC here; the browser suites check a local zone)', () => {
  it('shows an instant to the second with its zone, milliseconds when asked', () => {
    expect(formatInstant('2026-12-07T18:04:40.123Z', 'utc')).toBe('2026-12-07 18:04:40 UTC');
    expect(formatInstant('2026-12-07T18:04:40.123Z', 'utc', true)).toBe('2026-12-07 18:04:40.123 UTC');
    expect(formatInstant('not a time', 'utc')).toBe('not a time');
  });

  it('reads and writes a time field in the zone: the same instant back', () => {
    expect(toField('2026-12-07T18:04:00.000Z', 'utc')).toBe('2026-12-07T18:04');
    expect(toField('2026-12-07T18:04:40.000Z', 'utc')).toBe('2026-12-07T18:04:40');
    expect(fromField('2026-12-07T18:04', 'utc')).toBe('2026-12-07T18:04:00.000Z');
    expect(fromField('2026-12-07T18:04:40', 'utc')).toBe('2026-12-07T18:04:40.000Z');
    expect(fromField('', 'utc')).toBeUndefined();
    expect(fromField('yesterday', 'utc')).toBeUndefined();
    expect(toField(null, 'utc')).toBe('');
  });

  it('says an age in words', () => {
    const now = Date.parse('2026-12-07T18:00:00Z');
    const ago = (seconds: number) => ageText(new Date(now - seconds * 1000).toISOString(), now);
    expect([2, 12, 240, 3 * 3600, 86_400, 9 * 86_400].map(ago)).toEqual([
      'just now',
      '12 s ago',
      '4 min ago',
      '3 h ago',
      '1 day ago',
      '9 days ago',
    ]);
  });
});
