import { destinationUrlProblem, formatsOf } from './destination-url';

describe('destinationUrlProblem', () => {
  it.each([
    ['webhook', 'https://hooks.example.com/audit?x=1'],
    ['splunk_hec', 'https://splunk.example.com:8088'],
    ['datadog', 'https://http-intake.logs.datadoghq.eu'],
    ['otlp', 'https://otel.example.com:4318/'],
    ['syslog', 'syslog://logs.example.com:514'],
    ['syslog', 'syslog+tls://logs.example.com:6514'],
    ['syslog', 'syslog://[2001:db8::1]:514'],
    ['nats', 'nats://nats.example.com:4222/audit.events'],
    ['webhook', 'https://127.0.0.1/'], // refused at each attempt, not here (docs/contract.md §16)
  ] as const)('accepts %s %s', (kind, url) => {
    expect(destinationUrlProblem(kind, url, false)).toBeNull();
  });

  it.each([
    ['webhook', 'http://hooks.example.com/', /https/],
    ['webhook', 'ftp://hooks.example.com/', /https/],
    ['webhook', 'https://user:pw@hooks.example.com/', /password/],
    ['webhook', 'https://hooks.example.com/#x', /fragment/],
    ['webhook', 'https://hooks.example.com/#', /fragment/],
    ['webhook', 'not a url', /URL/],
    ['webhook', `https://hooks.example.com/${'a'.repeat(2048)}`, /2048/],
    ['otlp', 'syslog://logs.example.com:514', /https/],
    ['syslog', 'syslog://logs.example.com', /syslog:\/\/host:port/],
    ['syslog', 'syslog://logs.example.com:514/path', /syslog:\/\/host:port/],
    ['syslog', 'https://logs.example.com:514', /syslog:\/\/host:port/],
    ['syslog', 'syslog://logs.example.com:0', /syslog:\/\/host:port/],
    ['nats', 'nats://nats.example.com:4222', /subject/],
    ['nats', 'nats://nats.example.com:4222/audit.*', /subject/],
    ['nats', 'nats://nats.example.com:4222/audit..x', /subject/],
    ['nats', 'nats://nats.example.com/audit', /nats:\/\/host:port/],
  ] as const)('refuses %s %s', (kind, url, why) => {
    expect(destinationUrlProblem(kind, url, false)).toMatch(why);
  });

  it('accepts http:// only when private networks are allowed', () => {
    expect(destinationUrlProblem('splunk_hec', 'http://splunk.internal:8088', true)).toBeNull();
    expect(destinationUrlProblem('splunk_hec', 'http://splunk.internal:8088', false)).toMatch(/STREAM_ALLOW_PRIVATE/);
  });
});

describe('formatsOf', () => {
  it('offers cef to syslog only', () => {
    expect(formatsOf('syslog')).toEqual(['native', 'ocsf', 'cef']);
    for (const kind of ['webhook', 'splunk_hec', 'datadog', 'otlp', 'nats'] as const) {
      expect(formatsOf(kind)).toEqual(['native', 'ocsf']);
    }
  });
});
