import { accountDigest, AppError, CHAIN_ID } from '@app/common';
import type { StreamKey } from '@app/database';

/**
 * Where a live tail stands (docs/contract.md §13), as the SSE `id` of each event it sends: the window of
 * commits it is reading, between the snapshots `since` and `until` (pg_snapshot text), and the
 * last (timestamp, chain, position) it sent from that window. Resuming reads the rest of that window, then
 * moves on, so nothing is skipped or repeated. Opaque to clients: Base64url of a JSON array, bound
 * to the account like the list cursors (§8).
 */
export interface StreamPosition {
  since: string;
  until: string | null;
  after: StreamKey | null;
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const SNAPSHOT = /^\d{1,20}:\d{1,20}:(\d{1,20}(,\d{1,20})*)?$/;
/** Longer than any id we issue (a snapshot lists the transactions in flight), refused unread beyond. */
const MAX_POSITION_LENGTH = 8192;
const KIND = 'stream';
export function encodeStreamPosition(accountId: string, position: StreamPosition): string {
  const { since, until, after } = position;
  return Buffer.from(
    JSON.stringify([
      KIND,
      accountDigest(accountId),
      since,
      until,
      after?.time ?? null,
      after?.chainId ?? null,
      after?.position ?? null,
    ]),
    'utf8',
  ).toString('base64url');
}

/** The position of a Last-Event-ID, or 400 naming `field` for anything this endpoint did not issue to this account. */
export function decodeStreamPosition(accountId: string, text: string, field: string): StreamPosition {
  const invalid = AppError.validation([
    { field, message: `${field} was not issued by the event stream for this account` },
  ]);
  if (text.length > MAX_POSITION_LENGTH || !/^[A-Za-z0-9_-]+$/.test(text)) throw invalid;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid;
  }
  if (!Array.isArray(parsed) || parsed.length !== 7) throw invalid;
  const [kind, account, since, until, time, chainId, position] = parsed as unknown[];
  if (kind !== KIND || account !== accountDigest(accountId)) throw invalid;
  if (typeof since !== 'string' || !SNAPSHOT.test(since)) throw invalid;
  if (until !== null && (typeof until !== 'string' || !SNAPSHOT.test(until))) throw invalid;
  if (time === null && chainId === null && position === null) return { since, until, after: null };
  if (until === null || typeof chainId !== 'string' || !CHAIN_ID.test(chainId)) throw invalid;
  if (typeof time !== 'string' || !ISO_MS.test(time) || Number.isNaN(Date.parse(time))) throw invalid;
  if (typeof position !== 'number' || !Number.isSafeInteger(position) || position < 1) throw invalid;
  return { since, until, after: { time, chainId, position } };
}
