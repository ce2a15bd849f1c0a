import { DESTINATION_KINDS, KIND_FIELDS, REQUIRED_CREDENTIAL } from '../destinations/destination-kinds';
import { SINK_KINDS } from './kinds';
import { openSink } from './open-sink';
import { sampleTarget } from './sink.fixture';

describe('the kinds of destination, each from its module', () => {
  it('lists every kind once, in the order the API documents them', () => {
    expect(DESTINATION_KINDS).toEqual(['webhook', 'splunk_hec', 'datadog', 'otlp', 'syslog', 'nats']);
    for (const kind of DESTINATION_KINDS) expect(SINK_KINDS[kind].kind).toBe(kind);
  });

  it('gives each field to the kinds that take it, and requires the credential a kind cannot send without', () => {
    expect(KIND_FIELDS).toEqual({
      token: ['splunk_hec'],
      apiKey: ['datadog'],
      sourcetype: ['splunk_hec'],
      index: ['splunk_hec'],
    });
    expect(REQUIRED_CREDENTIAL).toEqual({ splunk_hec: 'token', datadog: 'apiKey' });
  });

  it('opens each kind with its own transport, connecting to nothing', async () => {
    const urls = {
      webhook: 'https://example.com/hook',
      splunk_hec: 'https://splunk.example.com:8088',
      datadog: 'https://http-intake.logs.datadoghq.eu',
      otlp: 'https://otel.example.com',
      syslog: 'syslog+tls://logs.example.com:6514',
      nats: 'nats://nats.example.com:4222/audit.events',
    } as const;
    for (const kind of DESTINATION_KINDS) {
      const sink = openSink(sampleTarget(kind, urls[kind]));
      expect(sink.constructor.name).toBe(
        {
          webhook: 'HttpSink',
          splunk_hec: 'HttpSink',
          datadog: 'HttpSink',
          otlp: 'HttpSink',
          syslog: 'SyslogSink',
          nats: 'NatsSink',
        }[kind],
      );
      await sink.close();
    }
  });
});
