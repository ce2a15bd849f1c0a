import { formatInstant, type Zone } from '../clock';

/*
 * The Statistics page's ranges and labels (issue 40 item 2), pure, unit-tested beside this file. The
 * service's buckets are UTC days and hours (docs/contract.md §13), every bucket of the range present.
 */
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

/**
 * The default range: the last 7 UTC days, today's included, for `day` (7 bars: a range that starts
 * mid-day would touch 8); the last 24 whole hours and the current one for `hour`. `before` is now,
 * rounded up to the minute.
 */
export function defaultRange(group: 'day' | 'hour', now: number): { after: string; before: string } {
  const before = Math.ceil(now / 60_000) * 60_000;
  const after = group === 'day' ? Math.floor(now / DAY) * DAY - 6 * DAY : Math.floor(now / HOUR) * HOUR - 24 * HOUR;
  return { after: new Date(after).toISOString(), before: new Date(before).toISOString() };
}

/** Every how many buckets a tick is labelled, so that labels of `labelWidth` px fit in `width` px. */
export function tickEvery(buckets: number, width: number, labelWidth: number): number {
  if (buckets <= 0) return 1;
  const fits = Math.max(1, Math.floor(width / labelWidth));
  return Math.max(1, Math.ceil(buckets / fits));
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/**
 * A bucket's label in the zone: a day as `Dec 7` (short) and `2026-12-07` (full); an hour as
 * `Dec 7 14:00` and the instant with its zone.
 */
export function bucketLabel(key: string, group: 'day' | 'hour', zone: Zone): { short: string; full: string } {
  const full = formatInstant(key, zone);
  const match = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d)/.exec(full);
  if (!match) return { short: key, full: key };
  const [, y, mo, d, h, mi] = match;
  const day = `${MONTHS[Number(mo) - 1]} ${Number(d)}`;
  return group === 'day' ? { short: day, full: `${y}-${mo}-${d}` } : { short: `${day} ${h}:${mi}`, full };
}
