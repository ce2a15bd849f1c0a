import { replicaTrouble } from './replica-trouble';

describe('replicaTrouble: what sends a replica read to the primary', () => {
  const failure = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

  it.each(['08006', '57P01', '57P03', '40001', 'ECONNREFUSED', 'ECONNRESET'])('%s: the replica’s own trouble', (code) =>
    expect(replicaTrouble(failure(code))).toBe(true),
  );

  it('a connection that ended without a code', () =>
    expect(replicaTrouble(new Error('Connection terminated unexpectedly'))).toBe(true));

  it.each(['57014', '42601', '22P02', '42501'])('%s: would fail on the primary too (a timeout, a bad query)', (code) =>
    expect(replicaTrouble(failure(code))).toBe(false),
  );

  it('anything without a code or such a message', () => {
    expect(replicaTrouble(new TypeError('x is undefined'))).toBe(false);
    expect(replicaTrouble(null)).toBe(false);
  });
});
