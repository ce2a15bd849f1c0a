import { compareInstants, exportPeriod, fileStamp } from './export-period';

describe('exportPeriod', () => {
  it('normalizes offsets to UTC and keeps milliseconds', () => {
    const sut = exportPeriod('2020-01-01T01:02:03.456+02:00', '2026-01-01');
    expect(sut.after.toISOString()).toBe('2019-12-31T23:02:03.456Z');
    expect(sut.before.toISOString()).toBe('2026-01-01T00:00:00.000Z');
  });

  it('rounds digits below the millisecond inward: after up, before down', () => {
    const sut = exportPeriod('2026-01-01T00:00:00.1231Z', '2026-01-01T00:00:00.9999Z');
    expect(sut.after.toISOString()).toBe('2026-01-01T00:00:00.124Z');
    expect(sut.before.toISOString()).toBe('2026-01-01T00:00:00.999Z');
  });

  it('does not round zeros below the millisecond', () => {
    expect(exportPeriod('2026-01-01T00:00:00.123000Z', '2026-01-01T00:00:00.123Z').after.toISOString()).toBe(
      '2026-01-01T00:00:00.123Z',
    );
  });
});

describe('compareInstants', () => {
  it.each([
    ['2026-01-01T00:00:00Z', '2026-01-01T01:00:00+01:00', 0],
    ['2026-01-01T00:00:00.001Z', '2026-01-01T00:00:00Z', 1],
    ['2026-01-01T00:00:00.0001Z', '2026-01-01T00:00:00.0002Z', -1],
    ['2026-01-01T00:00:00.00010Z', '2026-01-01T00:00:00.0001Z', 0],
    ['2025-12-31', '2026-01-01T00:00:00Z', -1],
  ])('%s vs %s: %d', (a, b, expected) => {
    expect(Math.sign(compareInstants(a, b))).toBe(expected);
  });
});

describe('fileStamp', () => {
  it('is UTC YYYYMMDDTHHMMSSZ without milliseconds', () => {
    expect(fileStamp(new Date('2026-11-22T07:24:53.999Z'))).toBe('20261122T072453Z');
  });
});
