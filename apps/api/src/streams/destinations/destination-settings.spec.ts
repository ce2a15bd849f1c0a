import { DestinationRow } from '@app/database';
import { lagSeconds } from './destination.mapper';
import { auditedSettings, auditedUrl, kindProblems } from './destination-settings';
import { headersProblem } from './dto/headers.validator';

describe('destination settings', () => {
  it('kindProblems: another kind’s fields, a missing credential, a wrong format', () => {
    const fields = (kind: Parameters<typeof kindProblems>[0], settings: object, creating = true) =>
      kindProblems(kind, settings, false, creating).map((p) => p.field);
    expect(fields('webhook', { url: 'https://a.example/' })).toEqual([]);
    expect(fields('webhook', { token: 't', apiKey: 'k', sourcetype: 's', index: 'i' })).toEqual([
      'token',
      'apiKey',
      'sourcetype',
      'index',
    ]);
    expect(fields('splunk_hec', {})).toEqual(['token']);
    expect(fields('splunk_hec', {}, false)).toEqual([]);
    expect(fields('datadog', { token: 't' })).toEqual(['token', 'apiKey']);
    expect(fields('webhook', { format: 'cef' })).toEqual(['format']);
    expect(fields('syslog', { format: 'cef' })).toEqual([]);
    expect(fields('webhook', { url: 'http://a.example/' })).toEqual(['url']);
  });

  it('auditedUrl drops user information, query and fragment', () => {
    expect(auditedUrl('https://user:pw@siem.example/in?token=x#y')).toBe('https://siem.example/in');
    expect(auditedUrl('nats://n.example:4222/audit.events')).toBe('nats://n.example:4222/audit.events');
    expect(auditedUrl('not a url?token=x')).toBe('not a url');
  });

  it('auditedSettings: header names and credential names only', () => {
    expect(
      auditedSettings({
        name: 'n',
        token: 'secret',
        apiKey: 'key',
        headers: { 'X-A': 'value' },
        q: null,
        x: undefined,
      }),
    ).toEqual({ name: 'n', q: null, headers: ['X-A'], credentials: ['token', 'apiKey'] });
  });

  it.each([
    [{ 'X-A': 'b' }, null],
    [{}, null],
    [[], 'must be an object'],
    [{ 'X A': 'b' }, 'RFC 7230 token'],
    [{ 'x-a': 'b', 'X-A': 'c' }, 'given twice'],
    [{ 'Content-Encoding': 'gzip' }, 'set by the service'],
    [{ 'webhook-signature': 'v1,x' }, 'set by the service'],
    [{ 'X-A': 'a\nb' }, 'printable'],
    [{ 'X-A': 'é' }, 'printable'],
    [{ 'X-A': null }, 'printable'],
  ])('headersProblem(%j) mentions %s, never the value', (headers, problem) => {
    const sut = headersProblem(headers);
    if (problem === null) expect(sut).toBeNull();
    else expect(sut).toContain(problem);
    expect(sut ?? '').not.toContain('gzip');
  });

  it('lagSeconds: 0 when active and caught up, null before any delivery, else seconds since the last event', () => {
    const row = (over: Partial<DestinationRow>) =>
      ({ state: 'active', caughtUp: false, lastDeliveredEventAt: null, ...over }) as DestinationRow;
    const now = Date.parse('2026-11-28T00:01:00.000Z');
    const at = new Date('2026-11-28T00:00:00.500Z');
    expect(lagSeconds(row({ caughtUp: true, lastDeliveredEventAt: at }), now)).toBe(0);
    expect(lagSeconds(row({}), now)).toBeNull();
    expect(lagSeconds(row({ lastDeliveredEventAt: at }), now)).toBe(59.5);
    expect(lagSeconds(row({ state: 'paused', caughtUp: true, lastDeliveredEventAt: at }), now)).toBe(59.5);
  });
});
