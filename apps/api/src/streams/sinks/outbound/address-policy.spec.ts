import { isForbiddenAddress } from './address-policy';
import { retryAfterMs } from './retry-after';

describe('isForbiddenAddress', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.16.0.1',
    '192.168.1.1',
    '100.64.0.1',
    '169.254.169.254',
    '0.0.0.0',
    '224.0.0.1',
    '255.255.255.255',
    '::',
    '::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:169.254.169.254',
    '64:ff9b::a9fe:a9fe',
    'fd00:ec2::254',
    'fc00::1',
    'fe80::1',
    'ff02::1',
    'not-an-address',
  ])('refuses %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:4700::1111', '::ffff:8.8.8.8'])('allows %s', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2026-11-28T00:00:00Z');

  it('reads seconds and HTTP dates, capped at 5 minutes', () => {
    expect(retryAfterMs('7', now)).toBe(7000);
    expect(retryAfterMs('Sat, 28 Nov 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(retryAfterMs('Sat, 27 Nov 2026 23:00:00 GMT', now)).toBe(0);
    expect(retryAfterMs('86400', now)).toBe(300_000);
  });

  it('ignores what is absent or unreadable', () => {
    expect(retryAfterMs(undefined, now)).toBeNull();
    expect(retryAfterMs('soon', now)).toBeNull();
    expect(retryAfterMs('-5', now)).toBeNull();
  });
});
