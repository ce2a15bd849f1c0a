import type { EventView } from '../../../events/dto/event.view';
import { toJsonEvent } from '../formats/json-event';
import type { Sink, SinkTarget } from '../sink';
import { baseHeaders, HttpSink, withPath } from './http-sink';
import { httpUrlProblem, JSON_FORMATS, type SinkKind } from '../sink-kind';

/** Splunk's default for JSON events that carry no sourcetype of their own. */
export const DEFAULT_SOURCETYPE = '_json';

/**
 * `splunk_hec`: one POST to `{url}/services/collector/event` of newline-separated HEC event objects
 * (Splunk docs, "Format events for HTTP Event Collector"), `Authorization: Splunk <token>`.
 */
export function splunkHecSink(target: SinkTarget): Sink {
  const url = withPath(target.url, '/services/collector/event');
  const headers = { ...baseHeaders(target, 'application/json'), authorization: `Splunk ${target.secrets.token ?? ''}` };
  return new HttpSink(target, (batch) => {
    const body = batch.events.map((event) => JSON.stringify(hecEvent(target, event))).join('\n');
    return Promise.resolve([{ url, headers, body: Buffer.from(body, 'utf8') }]);
  });
}

/** One HEC event: `time` in epoch seconds with milliseconds, as Splunk reads it. */
export function hecEvent(target: SinkTarget, event: EventView): Record<string, unknown> {
  return {
    time: Date.parse(event.timestamp) / 1000,
    host: target.hostname,
    source: 'audit-trail',
    sourcetype: target.options.sourcetype || DEFAULT_SOURCETYPE,
    ...(target.options.index ? { index: target.options.index } : {}),
    event: toJsonEvent(target.format, event),
  };
}

/** `splunk_hec`: an https URL, a token (required), a sourcetype and an index. */
export const splunkHecKind: SinkKind<'splunk_hec'> = {
  kind: 'splunk_hec',
  formats: JSON_FORMATS,
  fields: { token: 'required', sourcetype: 'optional', index: 'optional' },
  urlProblem: httpUrlProblem,
  open: splunkHecSink,
};
