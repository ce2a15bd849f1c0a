import { AppError } from '../errors';
import { ANY_ID } from '../ids';

/** Position of the last row of a page in a (time, id) keyset order. */
export interface CursorKey {
  time: string;
  id: string;
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Opaque to clients: Base64url of a small JSON array. */
export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.time, key.id]), 'utf8').toString('base64url');
}

/** Decodes a cursor, or throws 400 VALIDATION_ERROR for anything we did not issue. */
export function decodeCursor(cursor: string): CursorKey {
  const invalid = AppError.validation([{ field: 'cursor', message: 'cursor is not valid' }]);
  if (cursor.length > 200 || !/^[A-Za-z0-9_-]+={0,2}$/.test(cursor)) throw invalid;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) throw invalid;
  const [time, id] = parsed as unknown[];
  if (typeof time !== 'string' || typeof id !== 'string' || !ISO_MS.test(time) || !ANY_ID.test(id)) throw invalid;
  if (Number.isNaN(Date.parse(time))) throw invalid;
  return { time, id };
}

/** A page of `limit` rows, fetched as `limit + 1` to learn whether another page exists. */
export function toPage<T>(rows: T[], limit: number, keyOf: (row: T) => CursorKey): { items: T[]; nextCursor?: string } {
  if (rows.length <= limit) return { items: rows };
  const items = rows.slice(0, limit);
  const last = items[items.length - 1];
  return last ? { items, nextCursor: encodeCursor(keyOf(last)) } : { items };
}
