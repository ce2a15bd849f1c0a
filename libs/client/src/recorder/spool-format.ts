/*
 * The spool's lines (one JSON object a line, append-only, in files `<10-digit number>.log`):
 *
 *   {"t":"h","v":1,"below":N}                 first line of each file: every event numbered < N was settled
 *   {"t":"e","n":SEQ,"e":<event JSON>}        an event recorded (the event's text kept byte for byte)
 *   {"t":"b","k":"<key>","n":[SEQ,…]}         a batch formed, before it is sent: its Idempotency-Key and events, in order
 *   {"t":"a","k":"<key>"}                     the batch was acknowledged (201)
 *   {"t":"v","k":"<key>","r":[SEQ,…],"why":…} the batch was refused (4xx): the events `r` are rejected, the others
 *                                             go again in a new batch
 *
 * An event is settled when a batch holding it was acknowledged, or it was rejected. A batch
 * neither acknowledged nor refused is live: after a restart it is sent again with the same key and
 * the same bytes, so a batch the service stored before the crash is answered as a replay (§7)
 * instead of appended twice. A line cut short by a crash (no newline, or not JSON) was never
 * acknowledged to the caller (record() resolves after the fsync) and is ignored.
 */
export const SPOOL_FORMAT_VERSION = 1;

export interface RefusalSummary {
  status: number;
  code: string;
  message: string;
}

export type SpoolLine =
  | { t: 'h'; v: number; below: number }
  | { t: 'e'; n: number; text: string }
  | { t: 'b'; k: string; n: number[] }
  | { t: 'a'; k: string }
  | { t: 'v'; k: string; r: number[]; why: RefusalSummary };

/** The text of an event line; `eventText` is the event's JSON exactly as it is sent. */
export function eventLine(seq: number, eventText: string): string {
  return `${eventPrefix(seq)}${eventText}}\n`;
}

const eventPrefix = (seq: number): string => `{"t":"e","n":${seq},"e":`;

export function headerLine(below: number): string {
  return `${JSON.stringify({ t: 'h', v: SPOOL_FORMAT_VERSION, below })}\n`;
}

export function batchLine(key: string, seqs: readonly number[]): string {
  return `${JSON.stringify({ t: 'b', k: key, n: seqs })}\n`;
}

export function ackLine(key: string): string {
  return `${JSON.stringify({ t: 'a', k: key })}\n`;
}

export function voidLine(key: string, rejected: readonly number[], why: RefusalSummary): string {
  return `${JSON.stringify({ t: 'v', k: key, r: rejected, why })}\n`;
}

export class SpoolFormatError extends Error {
  override readonly name = 'SpoolFormatError';
}

/**
 * One line (without its newline) read back; null for a line cut short by a crash. An event line's
 * text is taken from the line itself, not re-serialized, so that its bytes are the ones first sent.
 */
export function parseSpoolLine(line: string): SpoolLine | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null) throw new SpoolFormatError(`not a spool line: ${line.slice(0, 80)}`);
  const record = value as Record<string, unknown>;
  switch (record.t) {
    case 'h':
      if (record.v !== SPOOL_FORMAT_VERSION)
        throw new SpoolFormatError(
          `spool format version ${String(record.v)}; this client reads ${SPOOL_FORMAT_VERSION}`,
        );
      return { t: 'h', v: SPOOL_FORMAT_VERSION, below: asSeq(record.below) };
    case 'e': {
      const seq = asSeq(record.n);
      const prefix = eventPrefix(seq);
      if (!line.startsWith(prefix) || !line.endsWith('}'))
        throw new SpoolFormatError(`a malformed event line (${seq})`);
      return { t: 'e', n: seq, text: line.slice(prefix.length, -1) };
    }
    case 'b':
      return { t: 'b', k: asKey(record.k), n: asSeqs(record.n) };
    case 'a':
      return { t: 'a', k: asKey(record.k) };
    case 'v':
      return { t: 'v', k: asKey(record.k), r: asSeqs(record.r), why: record.why as RefusalSummary };
    default:
      throw new SpoolFormatError(`an unknown spool line type ${JSON.stringify(record.t)}`);
  }
}

function asSeq(value: unknown): number {
  if (!Number.isSafeInteger(value) || (value as number) < 0) throw new SpoolFormatError('a bad event number');
  return value as number;
}

function asSeqs(value: unknown): number[] {
  if (!Array.isArray(value)) throw new SpoolFormatError('a bad list of event numbers');
  return value.map(asSeq);
}

function asKey(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) throw new SpoolFormatError('a bad idempotency key');
  return value;
}
