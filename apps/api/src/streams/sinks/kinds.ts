import type { DestinationKind } from './sink';
import type { KindField, SinkKind } from './sink-kind';
import { datadogKind } from './transports/datadog.sink';
import { natsKind } from './transports/nats.sink';
import { otlpKind } from './transports/otlp.sink';
import { splunkHecKind } from './transports/splunk-hec.sink';
import { syslogKind } from './transports/syslog.sink';
import { webhookKind } from './transports/webhook.sink';

/** Every kind of destination, each from its transport's module: the compiler refuses a kind missing here. */
export const SINK_KINDS: { readonly [K in DestinationKind]: SinkKind<K> } = {
  webhook: webhookKind,
  splunk_hec: splunkHecKind,
  datadog: datadogKind,
  otlp: otlpKind,
  syslog: syslogKind,
  nats: natsKind,
};

export const sinkKind = (kind: DestinationKind): SinkKind => SINK_KINDS[kind];

/** The kinds that take `field`. */
export function kindsTaking(field: KindField): DestinationKind[] {
  return Object.values<SinkKind>(SINK_KINDS)
    .filter((k) => k.fields[field] !== undefined)
    .map((k) => k.kind);
}
