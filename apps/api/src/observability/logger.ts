import { pino, DestinationStream, Logger } from 'pino';
import { AppConfig } from '@app/common';
import { prettyLines } from './pretty-lines';

/** Where log lines go: stdout, unless a test captures them (overrideProvider). */
export const LOG_DESTINATION = Symbol('LOG_DESTINATION');
/** The app's pino logger; request loggers are its children. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/**
 * The one redaction list. Nothing of ours logs these (serializers below and in request-logging.ts
 * name every field that is written), so this is a second line: a header, body or query string
 * that ever reaches a log object is removed, whatever key it sits under.
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
 * FLUSH_EVERY_MS, so a line is out within that; pino writes the rest at exit.
 */
export function stdoutDestination(): DestinationStream {
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), FLUSH_EVERY_MS).unref();
  return destination;
}

/**
 * JSON lines (contract §11): `time` ISO 8601, `level` as a word, `msg`; no pid or hostname.
 * LOG_FORMAT=pretty reformats the same lines for people.
 */
export function createRootLogger(config: AppConfig, destination: DestinationStream): Logger {
  return pino(
    {
      level: config.logLevel,
      base: null,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      serializers: { err: errorFields },
      redact: { paths: REDACTED_PATHS, remove: true },
    },
    config.logFormat === 'pretty' ? prettyLines(destination) : destination,
  );
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
