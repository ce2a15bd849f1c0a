import { createHash } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { MAX_BATCH_EVENTS } from '@app/common/limits';
import { ExitCode } from '../exit-code';
import { Io, printable } from '../io';
import { UsageError } from '../keys/keys.command';
import { IngestStopped, sendBatch, SenderOptions } from './batch-sender';
import { Batch, FileError, FileScan, readBatches, scanFile } from './ndjson-file';
import { fmt, Progress } from './progress';

export interface IngestOptions {
  file: string;
  url: string;
  key: string;
  batchSize: number;
  skipInvalid: boolean;
}

export const DEFAULT_BATCH_SIZE = 100;

/** Checks what the command line gave; the key may also come from AUDIT_TRAIL_KEY (kept out of `ps`). */
export function ingestOptions(
  file: string | undefined,
  values: { url?: string; key?: string; 'batch-size'?: string; 'skip-invalid'?: boolean },
  env: NodeJS.ProcessEnv,
): IngestOptions {
  if (!file) throw new UsageError('ingest takes exactly one NDJSON file');
  const url = values.url ?? '';
  if (!/^https?:\/\/[^/]/.test(url) || !URL.canParse(url))
    throw new UsageError('--url <base> is required: the service, e.g. http://localhost:3000');
  const key = values.key ?? env.AUDIT_TRAIL_KEY ?? '';
  if (!key) throw new UsageError('--key <api key> (scope ingest) is required, or AUDIT_TRAIL_KEY');
  const size = values['batch-size'] ?? String(DEFAULT_BATCH_SIZE);
  const batchSize = Number(size);
  if (!/^\d+$/.test(size) || batchSize < 1 || batchSize > MAX_BATCH_EVENTS)
    throw new UsageError(`--batch-size is 1-${MAX_BATCH_EVENTS}`);
  return { file, url: url.replace(/\/+$/, ''), key, batchSize, skipInvalid: values['skip-invalid'] === true };
}

interface Tally {
  done: number;
  appended: number;
  replayed: number;
  rejected: number[];
  started: number;
  /** The last line of the last batch that went through. */
  lastLine: number;
}

/**
 * `ingest <file.ndjson>`: the file is read twice. First for its SHA-256, its number of events and
 * its malformed lines (without --skip-invalid any of them stops the command before anything is
 * sent); then as batches of fixed line ranges, sent one at a time (so events of a chain keep the
 * file's order), each with `Idempotency-Key: ingest:<sha-256 prefix>:<first line>-<last line>`.
 * Running the same command again after a crash or Ctrl-C replays what is in and appends the rest.
 */
export async function ingestCommand(options: IngestOptions, io: Io): Promise<ExitCode> {
  const tally: Tally = { done: 0, appended: 0, replayed: 0, rejected: [], started: Date.now(), lastLine: 0 };
  const scan = await scanOrReport(options, io);
  if (typeof scan === 'number') return scan;
  tally.rejected.push(...scan.badLines.keys());
  const progress = new Progress(io.err, io.errIsTTY === true, scan.events);
  try {
    const stoppedAt = await sendAll(options, scan, tally, progress, io);
    progress.finish(tally.done);
    const stopped = stoppedAt === null ? '' : `; stopped: nothing from line ${stoppedAt} on was appended`;
    io.out(`${summary(options.file, tally)}${stopped}\n`);
    return tally.rejected.length > 0 ? ExitCode.Failed : ExitCode.Ok;
  } catch (error) {
    if (!(error instanceof IngestStopped)) throw error;
    progress.clear();
    io.err(`ingest: ${error.message}\n`);
    const where =
      tally.lastLine === 0
        ? 'before anything was appended'
        : `after line ${tally.lastLine}: the same command again resumes from there`;
    io.out(`${summary(options.file, tally)}; stopped ${where}\n`);
    return error.exitCode;
  }
}

/** The first reading; its bad lines are reported. An exit code when the command ends here. */
async function scanOrReport(options: IngestOptions, io: Io): Promise<FileScan | ExitCode> {
  let scan: FileScan;
  try {
    scan = await scanFile(options.file);
  } catch (error) {
    if (!(error instanceof FileError)) throw error;
    io.err(`ingest: ${error.message}\n`);
    return ExitCode.BadInput;
  }
  for (const [line, problems] of scan.badLines)
    for (const problem of problems) io.err(`line ${line}: ${printable(problem)}\n`);
  if (scan.badLines.size > 0 && !options.skipInvalid) {
    io.err(`ingest: ${scan.badLines.size} bad line(s); nothing was sent (--skip-invalid sends the others)\n`);
    return ExitCode.Failed;
  }
  return scan;
}

/** The second reading, batch by batch. Returns the first line of a batch the server refused (no --skip-invalid). */
async function sendAll(
  options: IngestOptions,
  scan: FileScan,
  tally: Tally,
  progress: Progress,
  io: Io,
): Promise<number | null> {
  const sender: SenderOptions = {
    url: `${options.url}/v1/events/batch`,
    key: options.key,
    sleep: io.sleep ?? ((ms) => delay(ms)),
    firstContact: () => tally.done === 0,
    onRetry: (reason, ms) => {
      progress.setNote(`retry in ${(ms / 1000).toFixed(1)} s (${reason})`);
      progress.update(tally.done, true);
    },
  };
  const report = (text: string) => {
    progress.clear();
    io.err(text);
  };
  const keyPrefix = `ingest:${scan.sha256.slice(0, 16)}`;
  for await (const batch of readBatches(options.file, options.batchSize, new Set(scan.badLines.keys()))) {
    const key = `${keyPrefix}:${batch.firstLine}-${batch.lastLine}`;
    const rejected = await ingestBatch(batch, key, tally, { sender, options, report });
    if (rejected && !options.skipInvalid) return batch.firstLine;
    tally.lastLine = batch.lastLine;
    progress.setNote('');
    progress.update(tally.done);
  }
  return null;
}

/**
 * Sends one batch. When the server names bad items, they are reported by line; with --skip-invalid
 * the rest goes again under a key that also names what was left out (a different body must not
 * reuse the range's key). Returns whether any line of the batch was rejected.
 */
async function ingestBatch(
  batch: Batch,
  rangeKey: string,
  tally: Tally,
  ctx: { sender: SenderOptions; options: IngestOptions; report: (text: string) => void },
): Promise<boolean> {
  let items = batch.items;
  const dropped: number[] = [];
  tally.done += batch.skipped;
  while (items.length > 0) {
    const key = dropped.length === 0 ? rangeKey : `${rangeKey}:without-${digest(dropped.join(','))}`;
    const outcome = await sendBatch(`{"events":[${items.map((i) => i.text).join(',')}]}`, key, ctx.sender);
    if (outcome.kind === 'appended') {
      tally.done += items.length;
      if (outcome.replayed) tally.replayed += items.length;
      else tally.appended += items.length;
      break;
    }
    const lines = [...outcome.items].map(([index, messages]) => {
      const item = items[index];
      if (!item) throw new IngestStopped(`the server named events[${index}] of a batch of ${items.length}`);
      for (const message of messages) ctx.report(`line ${item.line}: ${printable(message)}\n`);
      return item.line;
    });
    tally.rejected.push(...lines);
    if (!ctx.options.skipInvalid) return true;
    tally.done += lines.length;
    dropped.push(...lines);
    items = items.filter((i) => !lines.includes(i.line));
  }
  return dropped.length > 0;
}

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 12);

function summary(file: string, t: Tally): string {
  const seconds = (Date.now() - t.started) / 1000;
  const parts = [`${fmt(t.appended)} events appended`];
  if (t.replayed > 0) parts.push(`${fmt(t.replayed)} already in (replayed)`);
  if (t.rejected.length > 0) {
    const lines = [...new Set(t.rejected)].sort((a, b) => a - b);
    parts.push(
      `${fmt(lines.length)} line(s) rejected (${lines.slice(0, 10).join(', ')}${lines.length > 10 ? ', …' : ''})`,
    );
  }
  return `${file}: ${parts.join(', ')} in ${seconds.toFixed(1)} s (${fmt(t.appended / Math.max(seconds, 0.001))} events/s)`;
}
