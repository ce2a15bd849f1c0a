import { formatsFor, healthText, lagText, targetOf } from './destination-text';

describe('the Streams page in words (contract §16)', () => {
  it('says lag as a person reads it', () => {
    expect([null, 0, 0.4, 12.7, 59, 60, 3599, 3600, 3 * 3600 + 5, 86_400 * 2].map(lagText)).toEqual([
      'nothing delivered yet',
      'caught up',
      'caught up',
      '12 s',
      '59 s',
      '1 min',
      '59 min',
      '1 h',
      '3 h',
      '2 d',
    ]);
  });

  it('offers CEF for syslog only', () => {
    expect(formatsFor('syslog')).toEqual(['native', 'ocsf', 'cef']);
    expect(formatsFor('webhook')).toEqual(['native', 'ocsf']);
    expect(formatsFor('nats')).not.toContain('cef');
  });

  it('shows the whole target of a URL of any kind, never a user, password or query; an unparsable URL as it is', () => {
    expect(targetOf('https://user:pw@hooks.example.com:8443/a?b=c')).toBe('https://hooks.example.com:8443/a?…');
    expect(targetOf('https://hooks.example.com/audit')).toBe('https://hooks.example.com/audit');
    expect(targetOf('syslog+tls://siem.example.com:6514')).toBe('syslog+tls://siem.example.com:6514');
    expect(targetOf('nats://nats.example.com:4222/audit.events')).toBe('nats://nats.example.com:4222/audit.events');
    expect(targetOf('not a url')).toBe('not a url');
  });

  it('says a destination’s health in words: failing now, or what came after its last error', () => {
    const age = (iso: string) => `at ${iso}`;
    const at = '2026-11-28T01:00:00.000Z';
    const later = '2026-11-28T02:00:00.000Z';
    const error = { at, status: 503, message: '<b>down</b>' };
    expect(healthText({ lastError: null, consecutiveFailures: 0, lastDeliveredAt: null }, age)).toBe(
      'No delivery yet, none failed.',
    );
    expect(healthText({ lastError: null, consecutiveFailures: 0, lastDeliveredAt: later }, age)).toBe(
      'No delivery ever failed.',
    );
    expect(healthText({ lastError: error, consecutiveFailures: 4, lastDeliveredAt: null }, age)).toBe(
      `Failing: 4 attempts in a row, the last at ${at}: HTTP 503: \u2068<b>down</b>\u2069`,
    );
    expect(healthText({ lastError: error, consecutiveFailures: 0, lastDeliveredAt: later }, age)).toBe(
      `The last error was at ${at} (HTTP 503: \u2068<b>down</b>\u2069); since then delivered (the last at ${later}), 0 failing.`,
    );
    expect(
      healthText(
        { lastError: { at, status: null, message: 'timed out' }, consecutiveFailures: 1, lastDeliveredAt: null },
        age,
      ),
    ).toBe(`Failing: 1 attempt in a row, the last at ${at}: no answer: \u2068timed out\u2069`);
  });

  it('keeps a receiver’s direction marks inside its error: a U+202E cannot reverse the sentence around it', () => {
    const error = { at: '2026-11-28T01:00:00.000Z', status: 500, message: 'bad \u202egnissim' };
    const text = healthText({ lastError: error, consecutiveFailures: 2, lastDeliveredAt: null }, () => 'now');
    expect(text).toBe('Failing: 2 attempts in a row, the last now: HTTP 500: \u2068bad \u202egnissim\u2069');
  });
});
