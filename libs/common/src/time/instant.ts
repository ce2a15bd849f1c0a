/**
 * The instants a query may name (`after`, `before`): an RFC 3339 date-time with an offset, any
 * year 0000–9999 and a leap second (`:60`) included, or the shorter ISO 8601 forms below. One
 * parser, used by the validators and the services alike, so what is accepted is what is used.
 */
const INSTANT =
  /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:(Z)|([+-])(\d{2}):(\d{2})))?$/;

/** What the pattern accepts beyond RFC 3339's date-time, and how it reads it, for the OpenAPI description. */
export const DATE_TIME_TEXT =
  'An RFC 3339 date-time with an offset (years 0000–9999; a leap second, :60, is the first instant of the next minute, as PostgreSQL reads it); a date alone (midnight UTC) or a time without seconds is also accepted.';

/**
 * Nothing is stored outside years 1–9999 (UTC), where an ISO string has four digits of year:
 * a bound beyond (year 0000, or 9999 behind an offset) means the nearest end, which selects the same events.
 */
const EARLIEST = -62_135_596_800_000; // 0001-01-01T00:00:00.000Z
const LATEST = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

/**
 * The instant `text` names, in milliseconds since the epoch (digits below the millisecond
 * dropped), or null when it names none (a 30 February, a 24:00, an offset of +24:00, …).
 */
export function instantMillis(text: string): number | null {
  const read = readInstant(text);
  return read && clamp(read.millis);
}

/**
 * The first stored millisecond at or after the instant `text` names: instantMillis, plus one when
 * its digits below the millisecond are not all zero; null when it names none. Stored timestamps
 * have milliseconds, so a bound that keeps events from an instant on (`>=`) or before it (`<`)
 * rounds up (`< …00.0005` keeps an event at `…00.000`), one that keeps events after it (`>`) or up
 * to it (`<=`) rounds down, as instantMillis does.
 */
export function instantMillisUp(text: string): number | null {
  const read = readInstant(text);
  return read && clamp(read.millis + (read.finer ? 1 : 0));
}

function readInstant(text: string): { millis: number; finer: boolean } | null {
  const m = INSTANT.exec(text);
  if (!m) return null;
  const [, year, month, day, hour = '0', minute = '0', second = '0', fraction = '', , sign, offH = '0', offM = '0'] = m;
  const [y, mo, d, h, mi, s] = [year, month, day, hour, minute, second].map(Number);
  if (mo! < 1 || mo! > 12 || d! < 1 || d! > daysIn(y!, mo!) || h! > 23 || mi! > 59 || s! > 60) return null;
  if (Number(offH) > 23 || Number(offM) > 59) return null;
  const time = new Date(0);
  time.setUTCFullYear(y!, mo! - 1, d);
  time.setUTCHours(h!, mi, s, Number(fraction.slice(0, 3).padEnd(3, '0')));
  const offset = (Number(offH) * 60 + Number(offM)) * 60_000 * (sign === '-' ? -1 : 1);
  return { millis: time.getTime() - offset, finer: /[1-9]/.test(fraction.slice(3)) };
}

const clamp = (millis: number): number => Math.min(Math.max(millis, EARLIEST), LATEST);

/** Whether `value` is an instant instantMillis reads. */
export const isInstant = (value: unknown): value is string =>
  typeof value === 'string' && instantMillis(value) !== null;

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
