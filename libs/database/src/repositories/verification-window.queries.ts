import { EventHashPayload, LOWEST_STORED_LEVEL } from '@app/hashing';
import type { SqlQuery } from './sql-query';

export type { SqlQuery } from './sql-query';

/*
 * The SQL of a whole-chain verification window and which rows each read gives
 * (`verificationWindowReads`), run by VerificationWindowReader on the service's pool and by the
 * worker threads (apps/api/src/verification/chain-window.worker.ts) on their own connections
 * outside Nest. A file of its own so that a worker loads only this, not Nest or TypeORM.
 */

/** A stored event as verification reads it: exactly the hash payload, as hashed, and its stored hash. */
export interface VerifiedEventRow extends EventHashPayload {
  hash: string;
}

/** A row of a whole-chain verification window: also whether its account is its chain's. */
export interface VerificationWindowEventRow extends VerifiedEventRow {
  ownAccount: boolean;
}

/** What a whole-chain verification window covers: positions after < position <= upTo of one chain. */
export interface VerificationWindow {
  chainId: string;
  accountId: string;
  after: number;
  upTo: number;
  /** The walk's first window: it also takes the checkpoints of size `after` (0, or the number pruned). */
  first?: boolean;
}

/** A checkpoint of a whole-chain verification window: the size as text (bigint). */
export interface VerificationWindowCheckpointRow {
  size: string;
  hash: string;
  note: string;
}

/** Runs `query` and hands each row to `onRow`; resolves once the last has been handed over. */
export type RowStream = <Row>(query: SqlQuery, onRow: (row: Row) => void) => Promise<void>;

/** The three reads of a whole-chain verification window (libs/verification `WindowRows`). */
export interface VerificationWindowReads {
  checkpoints(window: VerificationWindow, onRow: (row: VerificationWindowCheckpointRow) => void): Promise<void>;
  events(window: VerificationWindow, onRow: (row: VerificationWindowEventRow) => void): Promise<void>;
  nodes(window: VerificationWindow, onRow: (row: VerificationWindowLevelRow) => void): Promise<void>;
}

/** A window's reads, each its query run through `stream`: the one place that says which query gives which rows. */
export function verificationWindowReads(stream: RowStream): VerificationWindowReads {
  return {
    checkpoints: (window, onRow) => stream(verificationWindowCheckpointsQuery(window), onRow),
    events: (window, onRow) => stream(verificationWindowEventsQuery(window), onRow),
    nodes: (window, onRow) => stream(verificationWindowNodesQuery(window), onRow),
  };
}

/** A timestamp column written by the database exactly as the API writes it (no Date per row). */
export function isoTimestamp(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
export const ISO_TIMESTAMP = isoTimestamp('"timestamp"');

/**
 * The events of a whole-chain verification window. Only what is hashed or checked, already named and typed as the hash
 * payload: the account as one boolean, the position as float8 (exact below 2^53, parsed to a
 * number), the timestamp formatted by the database. An honest window holds at most upTo − after
 * events (positions are unique); one more is read so that duplicates, should the constraint be
 * gone, still show while the window stays bounded.
 */
export function verificationWindowEventsQuery({ chainId, accountId, after, upTo }: VerificationWindow): SqlQuery {
  return {
    text: `SELECT id, $1::varchar AS "chainId", position::float8 AS position, actor, action, resource, context,
        ${ISO_TIMESTAMP} AS "timestamp", previous_hash AS "previousHash", hash, account_id = $5 AS "ownAccount"
   FROM events
  WHERE chain_id = $1 AND events.position > $2 AND events.position <= $3
  ORDER BY events.position
  LIMIT $4`,
    values: [chainId, after, upTo, upTo - after + 1, accountId],
  };
}

/**
 * The checkpoints of a whole-chain verification window (sizes after < size <= upTo; the first
 * window, after = 0 or the number of events pruned (docs/contract.md §14), also takes those of size `after`).
 */
export function verificationWindowCheckpointsQuery({ chainId, after, upTo, first }: VerificationWindow): SqlQuery {
  return {
    text: `SELECT size::text AS size, hash, note FROM checkpoints
  WHERE chain_id = $1 AND size > $2 AND size <= $3 ORDER BY checkpoints.size`,
    values: [chainId, first || after === 0 ? after - 1 : after, upTo],
  };
}

/** One level of a window's stored Merkle nodes (`verificationWindowNodesQuery`). */
export interface VerificationWindowLevelRow {
  level: number;
  /** Each node as its index (8 bytes, big-endian) followed by its hash (32 bytes), in index order. */
  nodes: Buffer;
}

/**
 * The stored Merkle nodes of a whole-chain verification window: every node (level ≥
 * LOWEST_STORED_LEVEL, index) whose last leaf lies in the window (after < (index + 1)·2^level <=
 * upTo), one row per level that has any, packed into one bytea (see VerificationWindowLevelRow).
 * (Lower levels are not stored: the window derives them from the events it reads.) A window holds
 * about one node per two events: one row
 * each cost the database and pg more than the hashing; one index range scan and one value per
 * level cost a fraction. A hash of another length than 32 bytes (only possible once
 * ck_merkle_nodes_hash is dropped) is left out, so that it counts as missing.
 */
export function verificationWindowNodesQuery({ chainId, after, upTo }: VerificationWindow): SqlQuery {
  return {
    text: `SELECT l.level, n.nodes
   FROM generate_series($5::int, $4::int) AS l(level)
   CROSS JOIN LATERAL (
     SELECT string_agg(int8send(m."index") || m.hash, ''::bytea ORDER BY m."index") AS nodes
       FROM merkle_nodes m
      WHERE m.chain_id = $1 AND m.level = l.level
        AND m."index" >= ($2::bigint >> l.level) AND m."index" < ($3::bigint >> l.level)
        AND octet_length(m.hash) = 32) n
  WHERE n.nodes IS NOT NULL`,
    values: [chainId, after, upTo, Math.max(0, Math.floor(Math.log2(Math.max(1, upTo)))), LOWEST_STORED_LEVEL],
  };
}
