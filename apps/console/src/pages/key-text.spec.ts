import { durationText, oldKeyText, OVERLAP, overlapText, parseOverlap, stopsAt } from './key-text';

describe('the Keys page in words (contract §12)', () => {
  it('says an overlap as a person reads it', () => {
    expect([0, 1, 45, 60, 90, 3600, 5400, 3661, 86_400].map(durationText)).toEqual([
      'at once',
      '1 second',
      '45 seconds',
      '1 minute',
      '1 minute 30 seconds',
      '1 hour',
      '1 hour 30 minutes',
      '1 hour 1 minute 1 second',
      '24 hours',
    ]);
  });

  it('takes whole seconds from 0 to 86,400 and nothing else', () => {
    expect(['0', '3600', ' 600 ', '86400'].map(parseOverlap)).toEqual([0, 3600, 600, 86_400]);
    expect(['', '-1', '86401', '1.5', '1e3', 'abc', '0x10', '9999999'].map(parseOverlap)).toEqual(Array(8).fill(null));
    expect(OVERLAP.default).toBe(3600);
  });

  it('says when the old key stops', () => {
    const now = new Date('2026-12-08T10:00:00.000Z');
    expect(overlapText(3600, now, null)).toBe(
      'The old key keeps working for 1 hour, until 2026-12-08T11:00:00.000Z, then it is refused.',
    );
    expect(overlapText(0, now, null)).toBe('The old key is refused at once (within 5 seconds on every instance).');
    // A key that expires sooner keeps its own expiry (the service takes the sooner of the two).
    expect(overlapText(3600, now, '2026-12-08T10:10:00.000Z')).toBe(
      'The old key keeps working until 2026-12-08T10:10:00.000Z, when it expires anyway, then it is refused.',
    );
    expect(stopsAt(60, now, '2027-01-01T00:00:00.000Z').toISOString()).toBe('2026-12-08T10:01:00.000Z');
  });

  it('says what became of the old key after a rotation', () => {
    const madeAt = new Date('2026-12-08T10:00:00.000Z');
    expect(oldKeyText('ats_abcd', stopsAt(600, madeAt, null), madeAt)).toBe(
      'The old key (prefix ats_abcd) keeps working until 2026-12-08T10:10:00.000Z, then it is refused.',
    );
    expect(oldKeyText('ats_abcd', stopsAt(0, madeAt, null), madeAt)).toBe(
      'The old key (prefix ats_abcd) is refused within 5 seconds.',
    );
  });
});
