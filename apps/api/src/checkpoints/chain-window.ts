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

/**
 * Runs SQL with positional parameters and hands each row to `onRow` as it arrives; resolves when
 * the last one has been handed over. Rows that are hashed and dropped at once die young: the
 * garbage collector then costs a fraction of what a window held in full costs.
 */
export type StreamRows = (sql: string, parameters: unknown[], onRow: (row: unknown) => void) => Promise<void>;

export interface StoredEvent extends EventHashPayload {
  /** False when the row's account is not the chain's. */
  ownAccount: boolean;
  hash: string;
}

export type HashedEvent = AuditedEvent & { computedHash: string };

/** Consecutive events that all hash to their stored hashes, belong to the chain's account and link up. */
export interface IntactRun {
  count: number;
  first: AuditedEvent;
  last: AuditedEvent;
}

/**
 * What a window holds, in position order: an intact run, travelling as its two ends (nothing
 * between them can be wrong), then, from the first event that is not (altered, foreign, out of
 * place), every event with its recomputed hash, so that the audit can say what is wrong. An
 * honest window is one run and no events.
 */
export interface WindowEvents {
  run: IntactRun | null;
  events: HashedEvent[];
}

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

export async function inspectWindow(
  stream: StreamRows,
  { chainId, accountId, after, upTo }: WindowRequest,
): Promise<WindowReport> {
  const checkpoints: WindowReport['checkpoints'] = [];
  const atSize = new Map<number, WindowReport['checkpoints'][number]>();
  await stream(CHECKPOINTS_SQL, [chainId, after === 0 ? -1 : after, upTo], (row) => {
    const { size, hash, note } = row as { size: string; hash: string; note: string };
    const entry: WindowReport['checkpoints'][number] = { checkpoint: { size: Number(size), hash, note }, event: null };
    checkpoints.push(entry);
    atSize.set(entry.checkpoint.size, entry);
  });
  const hasher = new WindowHasher();
  await stream(EVENTS_SQL, [chainId, after, upTo, upTo - after + 1, accountId], (row) => {
    const event = row as StoredEvent;
    hasher.add(event);
    const entry = atSize.get(event.position);
    if (entry && entry.event === null) entry.event = { id: event.id, hash: event.hash };
  });
  return { events: hasher.result(), checkpoints };
}

/** Recomputes every hash of a window of events in position order (all at once). */
export function hashWindow(events: readonly StoredEvent[]): WindowEvents {
  const hasher = new WindowHasher();
  for (const event of events) hasher.add(event);
  return hasher.result();
}

/** Hashes a window's events one by one, in position order, keeping only what the audit needs. */
class WindowHasher {
  private run: IntactRun | null = null;
  private readonly events: HashedEvent[] = [];

  add(event: StoredEvent): void {
    const computedHash = computeEventHash(event);
    const last = this.run?.last;
    const fits =
      this.events.length === 0 &&
      event.ownAccount &&
      computedHash === event.hash &&
      (last === undefined || (event.position === last.position + 1 && event.previousHash === last.hash));
    if (!fits) this.events.push({ ...audited(event), computedHash });
    else if (this.run) {
      this.run.count++;
      this.run.last = audited(event);
    } else {
      const first = audited(event);
      this.run = { count: 1, first, last: first };
    }
  }

  result(): WindowEvents {
    return { run: this.run, events: this.events };
  }
}

function audited({ id, ownAccount, position, hash, previousHash }: StoredEvent): AuditedEvent {
  return { id, ownAccount, position, hash, previousHash };
}
