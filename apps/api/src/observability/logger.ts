import { pino, DestinationStream, Logger, LoggerOptions } from 'pino';
import { AppConfig } from '@app/common';
import { prettyLines } from './pretty-lines';

/** Where log lines go: stdout, unless a test captures them (overrideProvider). */
export const LOG_DESTINATION = Symbol('LOG_DESTINATION');
/** The app's pino logger: every line but the request lines. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');
/** The request lines' logger (observeRequests): same destination and format, no redaction pass. */
export const REQUEST_LOGGER = Symbol('REQUEST_LOGGER');

/**
 * The one redaction list, for the root logger's free-form lines. Nothing of ours logs these (the
 * serializer below names every field of an error that is written), so this is a second line: a
 * header, body or query string that ever reaches a log object is removed, whatever key it sits
 * under. The request lines skip it: they are built from seven named fields (request-observer.ts),
 * and the wildcard pass doubled what a line costs.
 */
export const REDACTED_PATHS = [
  'authorization',
  'headers',
  'body',
  'query',
  'req',
  'res',
  '*.authorization',
  '*.headers',
  '*.body',
  '*.query',
];

/** How long a log line may wait in the buffer before it is written. */
const FLUSH_EVERY_MS = 100;

/**
 * stdout, written asynchronously in blocks of up to 4 KiB: one write per block, not per line (a
 * write per request line cost single appends several percent). A timer writes what waits every
 * FLUSH_EVERY_MS, so a line is out within that; pino writes the rest at exit. One per process: the
 * start-up logger and the app's write through the same buffer, so lines stay in order.
 */
export function stdoutDestination(): DestinationStream {
  return stdoutBoom();
}

/** Once every line logged so far is written out: what is printed next on stderr comes after them. */
export function stdoutWritten(): Promise<void> {
  if (stdout === undefined) return Promise.resolve();
  const destination = stdout;
  return new Promise((resolve) => destination.flush(() => resolve()));
}

function stdoutBoom(): ReturnType<typeof pino.destination> {
  if (stdout === undefined) {
    const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
    setInterval(() => destination.flush(), FLUSH_EVERY_MS).unref();
    stdout = destination;
  }
  return stdout;
}
let stdout: ReturnType<typeof pino.destination> | undefined;

/**
 * JSON lines (docs/contract.md §11): `time` ISO 8601, `level` as a word, `msg`; no pid or hostname.
 * LOG_FORMAT=pretty reformats the same lines for people.
 */
export function createRootLogger(config: AppConfig, destination: DestinationStream): Logger {
  return createLogger(config, destination, { redact: { paths: REDACTED_PATHS, remove: true } });
}

/** The request lines' logger: the root's format and destination, without the redaction pass. */
export function createRequestLogger(config: AppConfig, destination: DestinationStream): Logger {
  return createLogger(config, destination, {});
}

function createLogger(config: AppConfig, destination: DestinationStream, options: LoggerOptions): Logger {
  return pino(
    {
      level: config.logLevel,
      base: null,
      timestamp: isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: errorFields },
      ...options,
    },
    config.logFormat === 'pretty' ? prettyLines(destination) : destination,
  );
}

/** The second (ms since the epoch) isoTime last formatted, and its text up to the second. */
let isoSecond = Number.NaN;
let isoPrefix = '';

/**
 * pino's isoTime (`,"time":"2026-11-27T12:49:33.123Z"`) with the text up to the second kept while
 * the second lasts: Date#toISOString was a tenth of what a request line cost. The same text, digit
 * for digit.
 */
export function isoTime(now = Date.now()): string {
  const second = now - (((now % 1000) + 1000) % 1000);
  if (second !== isoSecond) {
    isoSecond = second;
    isoPrefix = `,"time":"${new Date(second).toISOString().slice(0, 20)}`;
  }
  return `${isoPrefix}${String(now - second).padStart(3, '0')}Z"`;
}

/**
 * An error as logged: its class, code (a SQLSTATE, say), message and stack, and nothing else. A
 * driver's error carries its SQL text and parameters (event bodies) in other properties: never written.
 */
export function errorFields(error: unknown): Record<string, unknown> {
  if (!(error instanceof Error)) return { message: String(error) };
  const code = (error as { code?: unknown }).code;
  return {
    type: error.constructor.name,
    ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}),
    message: error.message,
    stack: error.stack,
  };
}
