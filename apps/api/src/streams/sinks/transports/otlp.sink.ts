import type { EventView } from '../../../events/dto/event.view';
import { toJsonEvent } from '../formats/json-event';
import type { Sink, SinkTarget } from '../sink';
import { baseHeaders, HttpSink, withPath } from './http-sink';
import { httpUrlProblem, JSON_FORMATS, type SinkKind } from '../sink-kind';

/** An OTLP KeyValue with a string or int64 value (int64 as a decimal string, as OTLP/JSON encodes it). */
type OtlpAttribute = { key: string; value: { stringValue: string } | { intValue: string } };

const SEVERITY_INFO = 9; // OTLP SeverityNumber INFO

/**
 * `otlp`: one OTLP/HTTP JSON POST to `{url}/v1/logs` per batch, one logRecord per event (OTLP
 * specification, "OTLP/HTTP" and the logs data model); the body is the event as a JSON string.
 */
export function otlpSink(target: SinkTarget): Sink {
  const url = withPath(target.url, '/v1/logs');
  const headers = baseHeaders(target, 'application/json');
  const resource = { attributes: [text('service.name', 'audit-trail'), text('host.name', target.hostname)] };
  return new HttpSink(target, (batch) => {
    const body = JSON.stringify({
      resourceLogs: [
        {
          resource,
          scopeLogs: [{ scope: { name: 'audit-trail' }, logRecords: batch.events.map((e) => logRecord(target, e)) }],
        },
      ],
    });
    return Promise.resolve([{ url, headers, body: Buffer.from(body, 'utf8') }]);
  });
}

/** One event as an OTLP LogRecord, with the attributes docs/contract.md §16 names. */
export function logRecord(target: SinkTarget, event: EventView): Record<string, unknown> {
  return {
    timeUnixNano: (BigInt(Date.parse(event.timestamp)) * 1_000_000n).toString(),
    severityNumber: SEVERITY_INFO,
    severityText: 'INFO',
    body: { stringValue: JSON.stringify(toJsonEvent(target.format, event)) },
    attributes: [
      text('audit.event.id', event.id),
      text('audit.chain.id', event.chain.id),
      { key: 'audit.chain.position', value: { intValue: String(event.chain.position) } },
      text('audit.action', event.action),
      ...(event.actor === null ? [] : [text('audit.actor', event.actor)]),
    ] satisfies OtlpAttribute[],
  };
}

function text(key: string, value: string): OtlpAttribute {
  return { key, value: { stringValue: value } };
}

/** `otlp`: an https URL (the collector's base; /v1/logs is appended). */
export const otlpKind: SinkKind<'otlp'> = {
  kind: 'otlp',
  formats: JSON_FORMATS,
  fields: {},
  urlProblem: httpUrlProblem,
  open: otlpSink,
};
