import { AppConfig, AppError } from '@app/common';
import { ExportSlots } from './export-slots';

describe('ExportSlots', () => {
  const config = Object.assign(new AppConfig(), { exportsPerAccount: 2, exportsPerInstance: 3 });
  let sut: ExportSlots;
  beforeEach(() => {
    sut = new ExportSlots(config);
  });

  const refusal = (accountId: string): AppError => {
    try {
      sut.take(accountId);
    } catch (error) {
      return error as AppError;
    }
    throw new Error('not refused');
  };

  it('gives an account exportsPerAccount slots, then 429 RATE_LIMITED with Retry-After', () => {
    sut.take('a');
    sut.take('a');
    expect(refusal('a')).toMatchObject({
      code: 'RATE_LIMITED',
      details: { limit: 2 },
      headers: { 'Retry-After': '5' },
    });
    expect(sut.inFlight).toBe(2);
  });

  it('gives the instance exportsPerInstance slots, whatever the account', () => {
    sut.take('a');
    sut.take('b');
    sut.take('c');
    expect(refusal('d')).toMatchObject({ code: 'RATE_LIMITED', details: { limit: 3 } });
  });

  it('counts a slot released twice once', () => {
    const first = sut.take('a');
    sut.take('a');
    first.release();
    first.release();
    expect(sut.inFlight).toBe(1);
    sut.take('a'); // the account has one free again, not two
    expect(refusal('a').code).toBe('RATE_LIMITED');
  });

  it('resolves whenIdle once the last slot is released', async () => {
    const a = sut.take('a');
    const b = sut.take('b');
    let idle = false;
    const waiting = sut.whenIdle().then(() => (idle = true));
    a.release();
    await Promise.resolve();
    expect(idle).toBe(false);
    b.release();
    await waiting;
    expect(idle).toBe(true);
    await expect(sut.whenIdle()).resolves.toBeUndefined();
  });
});
