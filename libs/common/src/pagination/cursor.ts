import { createHash } from 'node:crypto';
import { AppError } from '../errors';
import { ACCOUNT_ID, CHAIN_ID, DESTINATION_ID, ERASURE_ID, EVENT_ID, KEY_ID } from '../ids';
import { MAX_CURSOR_LENGTH } from '../limits';

/** Position of the last row of a page in a (time, id) keyset order. */
export interface CursorKey {
  time: string;
  id: string;
}

const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * A cursor is valid only on the endpoint, and for the account, that issued it (docs/contract.md §8): each
 * list endpoint has its own codec, whose name travels inside the cursor with the key, and whose rows
 * have ids of one kind; the account travels as a short digest of its id, compared on the way back.
 * Opaque to clients: Base64url of a small JSON array `[endpoint, account digest, time, id]`.
 * The digest is not a secret (tenancy is every query's job): it names the account without putting
 * an internal id in a token clients log and share, and refuses another account's cursor.
 */
export class CursorCodec {
  constructor(
    private readonly endpoint: string,
    private readonly idPattern: RegExp,
  ) {}

  encode(accountId: string, key: CursorKey): string {
    return Buffer.from(JSON.stringify([this.endpoint, accountDigest(accountId), key.time, key.id]), 'utf8').toString(
      'base64url',
    );
  }

  /** Decodes a cursor, or throws 400 VALIDATION_ERROR for anything this endpoint did not issue to this account. */
  decode(accountId: string, cursor: string): CursorKey {
    const invalid = AppError.validation([
      { field: 'cursor', message: 'cursor was not issued by this endpoint for this account' },
    ]);
    if (cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+={0,2}$/.test(cursor)) throw invalid;
    let parsed: unknown;
    try {
      parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    } catch {
      throw invalid;
    }
    if (!Array.isArray(parsed) || parsed.length !== 4) throw invalid;
    const [endpoint, account, time, id] = parsed as unknown[];
    if (endpoint !== this.endpoint || account !== accountDigest(accountId)) throw invalid;
    if (typeof time !== 'string' || typeof id !== 'string') throw invalid;
    if (!ISO_MS.test(time) || Number.isNaN(Date.parse(time)) || !this.idPattern.test(id)) throw invalid;
    return { time, id };
  }

  /** A page of `limit` rows, fetched as `limit + 1` to learn whether another page exists. */
  page<T>(
    accountId: string,
    rows: T[],
    limit: number,
    keyOf: (row: T) => CursorKey,
  ): { items: T[]; nextCursor?: string } {
    if (rows.length <= limit) return { items: rows };
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return last ? { items, nextCursor: this.encode(accountId, keyOf(last)) } : { items };
  }
}

/** Digests remembered: a live tail encodes thousands of positions a second for its one account. */
const digests = new Map<string, string>();
const MAX_DIGESTS = 1_000;

/** 64 bits of SHA-256 of the account id, Base64url: 11 characters (remembered for the last accounts seen). */
export function accountDigest(accountId: string): string {
  let digest = digests.get(accountId);
  if (digest === undefined) {
    if (digests.size >= MAX_DIGESTS) digests.clear();
    digest = createHash('sha256').update(accountId, 'utf8').digest().subarray(0, 8).toString('base64url');
    digests.set(accountId, digest);
  }
  return digest;
}

/** GET /v1/events. */
export const EVENTS_CURSOR = new CursorCodec('events', EVENT_ID);
/** GET /v1/chains. */
export const CHAINS_CURSOR = new CursorCodec('chains', CHAIN_ID);
/** GET /v1/accounts (the caller's account is the cursor's: an operator's listing). */
export const ACCOUNTS_CURSOR = new CursorCodec('accounts', ACCOUNT_ID);
export const ERASURES_CURSOR = new CursorCodec('erasures', ERASURE_ID);
/** GET /v1/accounts/:accountId/keys (the listed account is the cursor's). */
export const KEYS_CURSOR = new CursorCodec('keys', KEY_ID);
/** GET /v1/accounts/:accountId/destinations (the listed account is the cursor's). */
export const DESTINATIONS_CURSOR = new CursorCodec('destinations', DESTINATION_ID);
