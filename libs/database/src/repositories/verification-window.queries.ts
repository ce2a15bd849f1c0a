import type { Client } from 'pg';
import { Query } from 'pg';
import { ulidToUuid, uuidToUlid } from '@app/common/ids';
import { LOWEST_STORED_LEVEL } from '@app/hashing';
// Types only: a worker thread loads this file, and the entities would load TypeORM.
import type { CheckpointEntity } from '../entities/checkpoint.entity';
import type { ErasureEventEntity } from '../entities/erasure-event.entity';
import type { EventEntity } from '../entities/event.entity';
import type { MerkleNodeEntity } from '../entities/merkle-node.entity';
import type { SqlQuery } from './sql-query';

export type { SqlQuery } from './sql-query';

/*
 * The SQL of a whole-chain verification window and which rows each read gives
 * (`verificationWindowReads`), run by VerificationWindowReader on the service's pool and by the
 * worker threads (apps/api/src/verification/chain-window.worker.ts, through `clientRowStream`) on
 * their own connections outside Nest. A file of its own so that a worker loads only this and pg, not
 * Nest or TypeORM: so its SQL cannot be written from the entities' metadata (Table). It names the
 * columns it reads through WINDOW_COLUMNS, keyed by the entities' properties (a renamed property
 * fails typecheck), whose column names the spec compares with the metadata.
 */

/** The columns these queries read, by entity property, as SQL names them. */
export const WINDOW_COLUMNS = {
  events: {
    id: 'id',
    accountId: 'account_id',
    chainId: 'chain_id',
    position: 'position',
    actor: 'actor',
    action: 'action',
    resource: 'resource',
    context: 'context',
    timestamp: '"timestamp"',
    previousHash: 'previous_hash',
    hash: 'hash',
    saltSeed: 'salt_seed',
    erasure: 'erasure',
  } satisfies Partial<Record<keyof EventEntity, string>>,
  checkpoints: {
    chainId: 'chain_id',
    size: 'size',
    hash: 'hash',
    note: 'note',
  } satisfies Partial<Record<keyof CheckpointEntity, string>>,
  merkleNodes: {
    chainId: 'chain_id',
    level: 'level',
    index: '"index"',
    hash: 'hash',
  } satisfies Partial<Record<keyof MerkleNodeEntity, string>>,
  erasureEvents: {
    chainId: 'chain_id',
    position: 'position',
    eventId: 'event_id',
    fields: 'fields',
  } satisfies Partial<Record<keyof ErasureEventEntity, string>>,
};
const E = WINDOW_COLUMNS.events;
const K = WINDOW_COLUMNS.checkpoints;
const M = WINDOW_COLUMNS.merkleNodes;
const R = WINDOW_COLUMNS.erasureEvents;

/**
 * The field paths the database's erasure record (erasure_events, migration 1766000000000) holds for the
 * event of the row `events` names (text[], distinct), or null for an event that keeps no erasure: what
 * verification holds each erased field against (docs/contract.md §17).
 */
export function recordedErasuresSql(events: string): string {
  return `CASE WHEN ${events}.${E.erasure} IS NOT NULL THEN (
      SELECT coalesce(array_agg(DISTINCT f), '{}') FROM erasure_events r, unnest(r.${R.fields}) AS f
       WHERE r.${R.chainId} = ${events}.${E.chainId} AND r.${R.position} = ${events}.${E.position} AND r.${R.eventId} = ${events}.${E.id}) END`;
}

/**
 * A stored event as verification reads it: exactly the hash payload, as hashed (the time as the
 * API writes it, not the entity's Date), and its stored hash.
 */
export type VerifiedEventRow = Pick<
  EventEntity,
  | 'id'
  | 'chainId'
  | 'position'
  | 'actor'
  | 'action'
  | 'resource'
  | 'context'
  | 'previousHash'
  | 'hash'
  | 'saltSeed'
  | 'erasure'
> & { timestamp: string };

/**
 * A row of a whole-chain verification window: also whether its account is its chain's, and the
 * erased fields the database recorded (recordedErasuresSql).
 */
export type VerificationWindowEventRow = VerifiedEventRow & { ownAccount: boolean; recordedErasures: string[] | null };

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
export type VerificationWindowCheckpointRow = Pick<CheckpointEntity, 'hash' | 'note'> & { size: string };

/**
 * Runs `query` and hands each row to `onRow`; resolves once the last has been handed over. The rows
 * are pg's as the query names and types its columns (`Row` is what the query's SELECT list says:
 * not decoded, for these are verification's hot path, a window of thousands of rows at a time).
 */
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
    // The id as the API writes it (stored as a uuid since migration 1765900000000): it is hashed.
    events: (window, onRow) =>
      stream<VerificationWindowEventRow>(verificationWindowEventsQuery(window), (row) => {
        row.id = uuidToUlid('evt', row.id);
        onRow(row);
      }),
    nodes: (window, onRow) => stream(verificationWindowNodesQuery(window), onRow),
  };
}

/**
 * A RowStream on a pg Client of its own (a worker thread's): the rows handed over one by one as they
 * arrive, never collected (pg's Query with a 'row' listener).
 */
export function clientRowStream(client: Client): RowStream {
  return <Row>({ text, values }: SqlQuery, onRow: (row: Row) => void) =>
    new Promise<void>((resolve, reject) => {
      const query = client.query(new Query(text, values));
      query.on('row', (row: Row) => {
        try {
          onRow(row);
        } catch (error) {
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      });
      query.on('end', () => resolve());
      query.on('error', reject);
    });
}

/** A timestamp column written by the database exactly as the API writes it (no Date per row). */
export function isoTimestamp(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}
export const ISO_TIMESTAMP = isoTimestamp(E.timestamp);

/**
 * The events of a whole-chain verification window. Only what is hashed or checked, already named and typed as the hash
 * payload (the stored 32-byte hashes as hex, encoded by the database): the account as one boolean, the position as float8 (exact below 2^53, parsed to a
 * number), the timestamp formatted by the database. An honest window holds at most upTo − after
 * events (positions are unique); one more is read so that duplicates, should the constraint be
 * gone, still show while the window stays bounded.
 */
export function verificationWindowEventsQuery({ chainId, accountId, after, upTo }: VerificationWindow): SqlQuery {
  return {
    text: `SELECT ${E.id} AS "id", $6::varchar AS "chainId", ${E.position}::float8 AS "position", ${E.actor} AS "actor",
        ${E.action} AS "action", ${E.resource} AS "resource", ${E.context} AS "context", ${ISO_TIMESTAMP} AS "timestamp",
        encode(${E.previousHash}, 'hex') AS "previousHash", encode(${E.hash}, 'hex') AS "hash",
        encode(${E.saltSeed}, 'hex') AS "saltSeed", ${E.erasure} AS "erasure", ${E.accountId} = $5 AS "ownAccount",
        ${recordedErasuresSql('events')} AS "recordedErasures"
   FROM events
  WHERE ${E.chainId} = $1 AND events.${E.position} > $2 AND events.${E.position} <= $3
  ORDER BY events.${E.position}
  LIMIT $4`,
    values: [ulidToUuid(chainId), after, upTo, upTo - after + 1, ulidToUuid(accountId), chainId],
  };
}

/**
 * The checkpoints of a whole-chain verification window (sizes after < size <= upTo; the first
 * window, after = 0 or the number of events pruned (docs/contract.md §14), also takes those of size `after`).
 */
export function verificationWindowCheckpointsQuery({ chainId, after, upTo, first }: VerificationWindow): SqlQuery {
  return {
    text: `SELECT ${K.size}::text AS "size", encode(${K.hash}, 'hex') AS "hash", ${K.note} AS "note" FROM checkpoints
  WHERE ${K.chainId} = $1 AND ${K.size} > $2 AND ${K.size} <= $3 ORDER BY checkpoints.${K.size}`,
    values: [ulidToUuid(chainId), first || after === 0 ? after - 1 : after, upTo],
  };
}

/**
 * One level of a window's stored Merkle nodes (`verificationWindowNodesQuery`): `nodes` is each node
 * as its index (8 bytes, big-endian) followed by its hash (32 bytes), in index order.
 */
export type VerificationWindowLevelRow = Pick<MerkleNodeEntity, 'level'> & { nodes: Buffer };

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
    text: `SELECT l.level AS "level", n.nodes AS "nodes"
   FROM generate_series($5::int, $4::int) AS l(level)
   CROSS JOIN LATERAL (
     SELECT string_agg(int8send(m.${M.index}) || m.${M.hash}, ''::bytea ORDER BY m.${M.index}) AS nodes
       FROM merkle_nodes m
      WHERE m.${M.chainId} = $1 AND m.${M.level} = l.level
        AND m.${M.index} >= ($2::bigint >> l.level) AND m.${M.index} < ($3::bigint >> l.level)
        AND octet_length(m.${M.hash}) = 32) n
  WHERE n.nodes IS NOT NULL`,
    values: [
      ulidToUuid(chainId),
      after,
      upTo,
      Math.max(0, Math.floor(Math.log2(Math.max(1, upTo)))),
      LOWEST_STORED_LEVEL,
    ],
  };
}
