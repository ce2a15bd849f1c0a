import { formatsFor, hostOf, lagText, lastErrorText } from './destination-text';

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

  it('shows the host of a URL of any kind, and an unparsable URL as it is', () => {
    expect(hostOf('https://user:pw@hooks.example.com:8443/a?b=c')).toBe('hooks.example.com:8443');
    expect(hostOf('syslog+tls://siem.example.com:6514')).toBe('siem.example.com:6514');
    expect(hostOf('nats://nats.example.com:4222/audit.events')).toBe('nats.example.com:4222');
    expect(hostOf('not a url')).toBe('not a url');
  });

  it('says the last error with its status, or that the receiver never answered', () => {
    const at = '2026-11-28T01:00:00.000Z';
    expect(lastErrorText(null)).toBe('none');
    expect(lastErrorText({ at, status: 503, message: '<b>down</b>' })).toBe(`HTTP 503: <b>down</b> (${at})`);
    expect(lastErrorText({ at, status: null, message: 'timed out after 10 s' })).toBe(
      `no answer: timed out after 10 s (${at})`,
    );
  });
});
