import { computeEventHash, EventHashPayload } from '@app/hashing';
import type { AuditedEvent, StoredCheckpoint } from './chain-audit';

/**
 * One window of whole-chain verification: the chain's events with after < position <= upTo and
 * the checkpoints signed in that range, read and hashed. This file knows nothing of Nest or of
 * where the query runs, so the same code serves the service's own connection pool and the worker
 * threads (chain-window.worker.ts) that read windows on their own connections.
 */
export interface WindowRequest {
  chainId: string;
  accountId: string;
  after: number;
  upTo: number;
}

/** Runs SQL with positional parameters and resolves to the rows. */
export type RunQuery = (sql: string, parameters: unknown[]) => Promise<unknown[]>;

export interface StoredEvent extends EventHashPayload {
  /** False when the row's account is not the chain's. */
  ownAccount: boolean;
  hash: string;
}

export type HashedEvent = AuditedEvent & { computedHash: string };

/**
 * What a window holds. A window whose events all hash to their stored hashes, belong to the
 * chain's account and follow one another (consecutive positions, each linked to the one before)
 * travels as its two ends: nothing between them can be wrong. Any other window travels whole,
 * every event with its recomputed hash, so that the audit can say what is wrong.
 */
export type WindowEvents = { intact: true; count: number; first: AuditedEvent; last: AuditedEvent } | { intact: false; events: HashedEvent[] };

export interface WindowReport {
  events: WindowEvents;
  /** Each checkpoint of the window with the stored event at its size (null when there is none). */
  checkpoints: { checkpoint: StoredCheckpoint; event: { id: string; hash: string } | null }[];
}

/**
 * Only what is hashed or checked, already named and typed as the hash payload: the account as
 * one boolean, the position as float8 (exact below 2^53, parsed to a number), the timestamp
 * formatted by the database exactly as the API writes it (no Date per row). An honest window
 * holds at most upTo − after events (positions are unique); one more is read so that duplicates,
 * should the constraint be gone, still show while the window stays bounded.
 */
const EVENTS_SQL = `SELECT id, $1::varchar AS "chainId", position::float8 AS position, actor, action, resource, context,
        to_char("timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "timestamp",
        previous_hash AS "previousHash", hash, account_id = $5 AS "ownAccount"
   FROM events
  WHERE chain_id = $1 AND events.position > $2 AND events.position <= $3
  ORDER BY events.position
  LIMIT $4`;

/** The first window (after = 0) also takes checkpoints of size 0. */
const CHECKPOINTS_SQL = `SELECT size::text AS size, hash, note FROM checkpoints
  WHERE chain_id = $1 AND size > $2 AND size <= $3 ORDER BY checkpoints.size`;

export async function inspectWindow(run: RunQuery, { chainId, accountId, after, upTo }: WindowRequest): Promise<WindowReport> {
  const events = (await run(EVENTS_SQL, [chainId, after, upTo, upTo - after + 1, accountId])) as StoredEvent[];
  const checkpoints = (await run(CHECKPOINTS_SQL, [chainId, after === 0 ? -1 : after, upTo])) as { size: string; hash: string; note: string }[];
  return {
    events: hashWindow(events),
    checkpoints: checkpoints.map((row) => {
      const checkpoint = { size: Number(row.size), hash: row.hash, note: row.note };
      const event = eventAt(events, checkpoint.size);
      return { checkpoint, event: event && { id: event.id, hash: event.hash } };
    }),
  };
}

/** Recomputes every hash of a window of events in position order. */
export function hashWindow(events: readonly StoredEvent[]): WindowEvents {
  const computed = events.map((event) => computeEventHash(event));
  const intact =
    events.length > 0 &&
    events.every((event, i) => {
      const before = i === 0 ? null : events[i - 1]!;
      return event.ownAccount && computed[i] === event.hash && (before === null || (event.position === before.position + 1 && event.previousHash === before.hash));
    });
  if (intact) return { intact: true, count: events.length, first: audited(events[0]!), last: audited(events[events.length - 1]!) };
  return { intact: false, events: events.map((event, i) => ({ ...audited(event), computedHash: computed[i]! })) };
}

function audited({ id, ownAccount, position, hash, previousHash }: StoredEvent): AuditedEvent {
  return { id, ownAccount, position, hash, previousHash };
}

/** The event at `position` in events sorted by position (binary search: windows may have gaps). */
function eventAt(events: readonly StoredEvent[], position: number): StoredEvent | null {
  let low = 0;
  let high = events.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const candidate = events[middle]!;
    if (candidate.position === position) return candidate;
    if (candidate.position < position) low = middle + 1;
    else high = middle - 1;
  }
  return null;
}
