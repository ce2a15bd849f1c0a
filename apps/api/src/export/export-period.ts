import { instantMillis, instantMillisUp } from '@app/common';

/** The export's inclusive period, normalized to the millisecond precision of stored timestamps. */
export interface ExportPeriod {
  after: Date;
  before: Date;
}

/**
 * Stored timestamps have milliseconds, so an inclusive bound with finer digits rounds inward:
 * `after` up (instantMillisUp) and `before` down (instantMillis).
 */
export function exportPeriod(after: string, before: string): ExportPeriod {
  return { after: new Date(instantMillisUp(after)!), before: new Date(instantMillis(before)!) };
}

/** Compares two valid ISO 8601 instants exactly, digits below the millisecond included. */
export function compareInstants(a: string, b: string): number {
  const [ma, mb] = [instantMillis(a)!, instantMillis(b)!];
  if (ma !== mb) return ma < mb ? -1 : 1;
  const [fa, fb] = [subMillisecondDigits(a), subMillisecondDigits(b)];
  return fa === fb ? 0 : fa < fb ? -1 : 1;
}

/** The fraction digits after the third, padded to six. */
function subMillisecondDigits(text: string): string {
  const fraction = /\.(\d+)/.exec(text)?.[1] ?? '';
  return fraction.slice(3).padEnd(6, '0');
}

/** `YYYYMMDDTHHMMSSZ`, milliseconds dropped, for the download's file name. */
export function fileStamp(time: Date): string {
  return `${time.toISOString().slice(0, 19).replace(/[-:]/g, '')}Z`;
}
