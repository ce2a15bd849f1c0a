import type { Sink, SinkTarget } from './sink';
import { datadogSink } from './transports/datadog.sink';
import { NatsSink } from './transports/nats.sink';
import { otlpSink } from './transports/otlp.sink';
import { splunkHecSink } from './transports/splunk-hec.sink';
import { SyslogSink } from './transports/syslog.sink';
import { webhookSink } from './transports/webhook.sink';

/**
 * The sink of a destination; nothing connects before deliver(). Throws only for a URL that
 * destinationUrlProblem refuses (the engine opens sinks of stored, validated destinations).
 */
export function openSink(target: SinkTarget): Sink {
  switch (target.kind) {
    case 'webhook':
      return webhookSink(target);
    case 'splunk_hec':
      return splunkHecSink(target);
    case 'datadog':
      return datadogSink(target);
    case 'otlp':
      return otlpSink(target);
    case 'syslog':
      return new SyslogSink(target);
    case 'nats':
      return new NatsSink(target);
  }
}
