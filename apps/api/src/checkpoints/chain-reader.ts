import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { EventEntity } from '@app/database';
import { EventHashPayload } from '@app/hashing';
import { StoredCheckpoint } from './chain-audit';

export interface StoredEvent extends EventHashPayload {
  /** False when the row's account is not the chain's. */
  ownAccount: boolean;
  hash: string;
}

export interface HeadFacts {
  position: number;
  checkpointsAbove: number;
  smallestAbove: number;
  eventsBeyond: number;
  firstBeyond: number;
}

/**
 * The SQL of whole-chain verification: keyset pages by position on uq_events_chain_position.
 * Reading rows costs as much as hashing them, so a page carries only what is hashed or checked,
 * already named and typed as the hash payload (the rows are used as they come, no copy): the
 * account as one boolean, the position as float8 (exact below 2^53, parsed to a number), the
 * timestamp formatted by the database exactly as the API writes it (no Date per row).
 */
@Injectable()
export class ChainReader {
  constructor(@InjectRepository(EventEntity) private readonly events: Repository<EventEntity>) {}

  /** Events of the chain with after < position <= upTo, in position order, at most `limit`. */
  async eventPage(chain: { id: string; accountId: string }, after: number, upTo: number, limit: number): Promise<StoredEvent[]> {
    const rows = (await this.events.manager.query(
      `SELECT id, $1::varchar AS "chainId", position::float8 AS position, actor, action, resource, context,
              to_char("timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS "timestamp",
              previous_hash AS "previousHash", hash, account_id = $5 AS "ownAccount"
         FROM events
        WHERE chain_id = $1 AND events.position > $2 AND events.position <= $3
        ORDER BY events.position
        LIMIT $4`,
      [chain.id, after, upTo, limit, chain.accountId],
    )) as StoredEvent[];
    return rows;
  }

  /** Stored checkpoints with above < size <= upTo, smallest first. */
  async checkpoints(chainId: string, above: number, upTo: number): Promise<StoredCheckpoint[]> {
    const rows = (await this.events.manager.query(
      `SELECT size::text AS size, hash, note FROM checkpoints WHERE chain_id = $1 AND size > $2 AND size <= $3 ORDER BY checkpoints.size`,
      [chainId, above, upTo],
    )) as { size: string; hash: string; note: string }[];
    return rows.map((r) => ({ size: Number(r.size), hash: r.hash, note: r.note }));
  }

  /** The head now, and what lies above it, read in one statement (one snapshot). */
  async headFacts(chainId: string): Promise<HeadFacts> {
    const [row] = (await this.events.manager.query(
      `SELECT c.last_position::text AS position,
              (SELECT count(*) FROM checkpoints k WHERE k.chain_id = c.id AND k.size > c.last_position)::int AS checkpoints_above,
              (SELECT min(k.size) FROM checkpoints k WHERE k.chain_id = c.id AND k.size > c.last_position)::text AS smallest_above,
              (SELECT count(*) FROM events e WHERE e.chain_id = c.id AND e.position > c.last_position)::int AS events_beyond,
              (SELECT min(e.position) FROM events e WHERE e.chain_id = c.id AND e.position > c.last_position)::text AS first_beyond
         FROM chains c WHERE c.id = $1`,
      [chainId],
    )) as { position: string; checkpoints_above: number; smallest_above: string | null; events_beyond: number; first_beyond: string | null }[];
    return {
      position: Number(row?.position ?? 0),
      checkpointsAbove: row?.checkpoints_above ?? 0,
      smallestAbove: Number(row?.smallest_above ?? 0),
      eventsBeyond: row?.events_beyond ?? 0,
      firstBeyond: Number(row?.first_beyond ?? 0),
    };
  }
}
