import { AppError } from '@app/common';
import { AccountSlots } from './account-slots';

describe('AccountSlots', () => {
  const limits = { perAccount: 2 };
  const refusals: string[] = [];
  let sut: AccountSlots;
  beforeEach(() => {
    refusals.length = 0;
    sut = new AccountSlots(
      () => limits,
      (scope, inFlight, limit) => {
        refusals.push(`${scope} ${inFlight}/${limit}`);
        return new AppError('RATE_LIMITED', 'busy', { limit }, { 'Retry-After': '1' });
      },
    );
  });

  it('limits each account alone when there is no instance limit', () => {
    for (const account of ['a', 'a', 'b', 'b', 'c']) sut.take(account);
    expect(() => sut.take('a')).toThrow(AppError);
    expect(refusals).toEqual(['account 2/2']);
    expect([sut.inFlightOf('a'), sut.inFlightOf('c'), sut.inFlightOf('d'), sut.inFlight]).toEqual([2, 1, 0, 5]);
  });

  it('holds a slot while run() works and gives it back however the work ends', async () => {
    let release!: () => void;
    const held = sut.run('a', () => new Promise<void>((resolve) => (release = resolve)));
    const failed = sut.run('a', () => Promise.reject(new Error('boom')));
    await expect(failed).rejects.toThrow('boom');
    expect(sut.inFlightOf('a')).toBe(1);
    await expect(sut.run('a', () => Promise.resolve(7))).resolves.toBe(7);
    sut.take('a');
    await expect(sut.run('a', () => Promise.resolve(8))).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    release();
    await held;
    expect(sut.inFlightOf('a')).toBe(1);
  });

  it('reads the limits at every take', () => {
    sut.take('a');
    limits.perAccount = 1;
    expect(() => sut.take('a')).toThrow(AppError);
    limits.perAccount = 2;
  });
});
