import { pino } from 'pino';
import { isoTime } from './logger';

describe('isoTime', () => {
  it('writes what pino.stdTimeFunctions.isoTime writes, across seconds, years and before 1970', () => {
    const spy = jest.spyOn(Date, 'now');
    try {
      for (const at of [
        0, 999, 1000, 1001, 1_764_245_373_123, 1_764_245_373_999, 1_764_245_374_000, -1, -1001, 253_402_300_799_999,
      ]) {
        spy.mockReturnValue(at);
        expect(isoTime(at)).toBe(pino.stdTimeFunctions.isoTime());
        expect(isoTime()).toBe(pino.stdTimeFunctions.isoTime());
      }
    } finally {
      spy.mockRestore();
    }
  });
});
