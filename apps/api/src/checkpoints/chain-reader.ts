import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { EventEntity } from '@app/database';
import { EventHashPayload } from '@app/hashing';
import { StoredCheckpoint } from './chain-audit';

export interface StoredEvent extends EventHashPayload {
  accountId: string;
  hash: string;
}

interface EventRow {
  id: string;
  account_id: string;
  chain_id: string;
  position: string;
  actor: string;
  action: string;
  resource: string | null;
  context: Record<string, unknown> | null;
  ts: string;
  previous_hash: string;
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
 * The SQL of whole-chain verification: keyset pages by position on uq_events_chain_position,
 * the timestamp formatted by the database exactly as the API writes it (ISO 8601 UTC with
 * milliseconds), so no Date objects are made per row.
 */
@Injectable()
export class ChainReader {
  constructor(@InjectRepository(EventEntity) private readonly events: Repository<EventEntity>) {}

  /** Events with after < position <= upTo, in position order, at most `limit`. */
  async eventPage(chainId: string, after: number, upTo: number, limit: number): Promise<StoredEvent[]> {
    const rows = (await this.events.manager.query(
      `SELECT id, account_id, chain_id, position::text AS position, actor, action, resource, context,
              to_char("timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ts, previous_hash, hash
         FROM events
        WHERE chain_id = $1 AND position > $2 AND position <= $3
        ORDER BY events.position
        LIMIT $4`,
      [chainId, after, upTo, limit],
    )) as EventRow[];
    return rows.map((r) => ({
      id: r.id,
      accountId: r.account_id,
      chainId: r.chain_id,
      position: Number(r.position),
      actor: r.actor,
      action: r.action,
      resource: r.resource,
      context: r.context,
      timestamp: r.ts,
      previousHash: r.previous_hash,
      hash: r.hash,
    }));
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
