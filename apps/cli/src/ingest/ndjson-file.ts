import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { MAX_BATCH_BODY_BYTES } from '@app/common/limits';
import { ENVELOPE_BYTES, eventLineProblems } from './event-line';

/** What one reading of the file found: its digest, how many events it holds, which lines are unusable. */
export interface FileScan {
  sha256: string;
  /** Non-blank lines. */
  events: number;
  /** Line number → why the line cannot be sent (one message per problem), in line order. */
  badLines: Map<number, string[]>;
}

export interface Batch {
  /** The fixed range of lines this batch stands for (blank and bad lines included). */
  firstLine: number;
  lastLine: number;
  /** The lines of the range that are sent, in file order. */
  items: { line: number; text: string }[];
  /** Non-blank lines of the range that are left out (known bad). */
  skipped: number;
}

export class FileError extends Error {
  override readonly name = 'FileError';
}

/** Reads each line of the file with its 1-based number; the file's bytes also go to `onChunk`. */
async function* lines(path: string, onChunk?: (chunk: Buffer) => void): AsyncGenerator<[number, string]> {
  const stream = createReadStream(path);
  const opened = new Promise<void>((resolve, reject) => stream.once('open', () => resolve()).once('error', reject));
  await opened.catch((error: NodeJS.ErrnoException) => {
    throw new FileError(`cannot read ${path}: ${error.code ?? error.message}`);
  });
  if (onChunk) stream.on('data', (chunk) => onChunk(chunk as Buffer));
  let n = 0;
  for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) yield [++n, line];
}

/**
 * The first of the two readings: SHA-256 of the bytes (the Idempotency-Keys hang on it), the
 * number of events (the progress bar's total) and every line the service would refuse, judged by
 * its own rules (event-line.ts), so every bad line is named before anything is sent. Invalid
 * UTF-8 stops it: such a file cannot be sent byte-faithfully.
 */
export async function scanFile(path: string): Promise<FileScan> {
  const hash = createHash('sha256');
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const badLines = new Map<number, string[]>();
  let events = 0;
  let invalidUtf8 = false;
  const onChunk = (chunk: Buffer) => {
    hash.update(chunk);
    try {
      utf8.decode(chunk, { stream: true });
    } catch {
      invalidUtf8 = true;
    }
  };
  for await (const [n, text] of lines(path, onChunk)) {
    if (text.trim() === '') continue;
    events++;
    const problems = await eventLineProblems(text);
    if (problems.length > 0) badLines.set(n, problems);
  }
  if (invalidUtf8) throw new FileError(`${path} is not UTF-8`);
  return { sha256: hash.digest('hex'), events, badLines };
}

/**
 * The second reading: batches of `batchSize` consecutive lines (fewer when the next line would take
 * the body past the 8 MiB limit). A batch is a range of lines, not of events, so the ranges, and
 * with them the Idempotency-Keys, are the same on every run over the same file, whichever lines
 * are blank or skipped. Batches with nothing to send are yielded too (they move the progress).
 */
export async function* readBatches(path: string, batchSize: number, skip: ReadonlySet<number>): AsyncGenerator<Batch> {
  let batch: Batch | null = null;
  let bytes = ENVELOPE_BYTES;
  for await (const [n, text] of lines(path)) {
    const blank = text.trim() === '';
    const size = blank || skip.has(n) ? 0 : Buffer.byteLength(text) + 1;
    if (batch && (n - batch.firstLine >= batchSize || bytes + size > MAX_BATCH_BODY_BYTES)) {
      yield batch;
      batch = null;
    }
    if (!batch) {
      batch = { firstLine: n, lastLine: n, items: [], skipped: 0 };
      bytes = ENVELOPE_BYTES;
    }
    batch.lastLine = n;
    if (size > 0) {
      batch.items.push({ line: n, text });
      bytes += size;
    } else if (!blank) batch.skipped++;
  }
  if (batch) yield batch;
}
