import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { EventEntity } from '@app/database';

export interface HeadFacts {
  position: number;
  checkpointsAbove: number;
  smallestAbove: number;
  eventsBeyond: number;
  firstBeyond: number;
}

/** The SQL of whole-chain verification besides the windows (chain-window.ts). */
@Injectable()
export class ChainReader {
  constructor(@InjectRepository(EventEntity) private readonly events: Repository<EventEntity>) {}

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
    )) as {
      position: string;
      checkpoints_above: number;
      smallest_above: string | null;
      events_beyond: number;
      first_beyond: string | null;
    }[];
    return {
      position: Number(row?.position ?? 0),
      checkpointsAbove: row?.checkpoints_above ?? 0,
      smallestAbove: Number(row?.smallest_above ?? 0),
      eventsBeyond: row?.events_beyond ?? 0,
      firstBeyond: Number(row?.first_beyond ?? 0),
    };
  }
}
