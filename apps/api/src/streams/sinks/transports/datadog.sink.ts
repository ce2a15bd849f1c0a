import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import { jsonEventText } from '../formats/json-event';
import type { Sink, SinkTarget } from '../sink';
import { baseHeaders, HttpSink, withPath, type HttpRequestSpec } from './http-sink';
import { httpUrlProblem, JSON_FORMATS, type SinkKind } from '../sink-kind';

/** Datadog Logs API v2 limits (docs, "Send logs"): entries per request, uncompressed bytes per request. */
export const DATADOG_MAX_ENTRIES = 1000;
export const DATADOG_MAX_BYTES = 5 * 1000 * 1000;

const gzipAsync = promisify(gzip);

/**
 * `datadog`: POSTs to `{url}/api/v2/logs`, gzip, `DD-API-KEY`, JSON arrays of `{ ddsource, service,
 * hostname, message }` (message: the event as JSON, which Datadog parses into attributes). A batch
 * above Datadog's limits goes as several requests, in order.
 */
export function datadogSink(target: SinkTarget): Sink {
  const url = withPath(target.url, '/api/v2/logs');
  const headers = {
    ...baseHeaders(target, 'application/json'),
    'content-encoding': 'gzip',
    'dd-api-key': target.secrets.apiKey ?? '',
  };
  return new HttpSink(target, async (batch) => {
    const entries = batch.events.map((event) =>
      JSON.stringify({
        ddsource: 'audit-trail',
        service: 'audit-trail',
        hostname: target.hostname,
        message: jsonEventText(target.format, event),
      }),
    );
    const requests: HttpRequestSpec[] = [];
    for (const chunk of datadogChunks(entries)) {
      requests.push({ url, headers, body: await gzipAsync(Buffer.from(`[${chunk.join(',')}]`, 'utf8')) });
    }
    return requests;
  });
}

/** Serialized entries grouped so each JSON array stays within DATADOG_MAX_ENTRIES and DATADOG_MAX_BYTES. */
export function datadogChunks(entries: string[]): string[][] {
  const chunks: string[][] = [];
  let current: string[] = [];
  let bytes = 2; // the brackets
  for (const entry of entries) {
    const size = Buffer.byteLength(entry, 'utf8') + 1; // and a comma
    if (current.length > 0 && (current.length === DATADOG_MAX_ENTRIES || bytes + size > DATADOG_MAX_BYTES)) {
      chunks.push(current);
      current = [];
      bytes = 2;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/** `datadog`: an https URL (the site's intake), an API key (required). */
export const datadogKind: SinkKind<'datadog'> = {
  kind: 'datadog',
  formats: JSON_FORMATS,
  fields: { apiKey: 'required' },
  urlProblem: httpUrlProblem,
  open: datadogSink,
};
