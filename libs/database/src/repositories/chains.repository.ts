import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Db } from '../transaction-runner';
import { SqlQuery, withWrite } from './sql-query';

/** The head now, and what lies above it (whole-chain verification's last look). */
export interface HeadFacts {
  position: number;
  checkpointsAbove: number;
  smallestAbove: number;
  eventsBeyond: number;
  firstBeyond: number;
  /** merkle_nodes rows of subtrees that end beyond the head: never written by the service (it stores a node once complete). */
  nodesBeyond: number;
}

/** A chain row: also the chain's head, moved forward in the same transaction as its events. */
export interface ChainRecord {
  id: string;
  accountId: string;
  name: string;
  lastPosition: number;
  lastHash: string;
  lastTimestamp: Date | null;
  createdAt: Date;
}

/** Where a chain's head stands after the events an append gives it. */
export interface ChainHeadMove {
  id: string;
  lastPosition: number;
  lastHash: string;
  lastTimestamp: Date;
}

interface ChainRow {
  id: string;
  account_id: string;
  name: string;
  last_position: string | number;
  last_hash: string;
  last_timestamp: Date | null;
  created_at: Date;
}

const COLUMNS = 'c.id, c.account_id, c.name, c.last_position, c.last_hash, c.last_timestamp, c.created_at';

function toChainRecord(row: ChainRow): ChainRecord {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    lastPosition: Number(row.last_position),
    lastHash: row.last_hash,
    lastTimestamp: row.last_timestamp,
    createdAt: row.created_at,
  };
}

/** Every query of the `chains` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class ChainsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /**
   * The account's chain head, locked FOR SHARE until the transaction ends: appends (which take it
   * FOR UPDATE) wait, other readers do not. Null for an unknown chain or another account's.
   */
  async lockHeadForShare(
    accountId: string,
    chainId: string,
    db: Db = this.pool,
  ): Promise<{ size: number; hash: string } | null> {
    const [row] = (await db.query(
      `SELECT last_position::text AS size, last_hash FROM chains WHERE id = $1 AND account_id = $2 FOR SHARE`,
      [chainId, accountId],
    )) as { size: string; last_hash: string }[];
    return row ? { size: Number(row.size), hash: row.last_hash } : null;
  }

  /** The head now, and what lies above it, read in one statement (one snapshot). */
  async headFacts(chainId: string, db: Db = this.pool): Promise<HeadFacts> {
    const [row] = (await db.query(
      `SELECT c.last_position::text AS position,
              (SELECT count(*) FROM checkpoints k WHERE k.chain_id = c.id AND k.size > c.last_position)::int AS checkpoints_above,
              (SELECT min(k.size) FROM checkpoints k WHERE k.chain_id = c.id AND k.size > c.last_position)::text AS smallest_above,
              (SELECT count(*) FROM events e WHERE e.chain_id = c.id AND e.position > c.last_position)::int AS events_beyond,
              (SELECT min(e.position) FROM events e WHERE e.chain_id = c.id AND e.position > c.last_position)::text AS first_beyond,
              -- Node (level, index) ends beyond the head when index >= head >> level: one index range per level.
              (SELECT count(*) FROM generate_series(0, 62) AS l(level)
                 JOIN merkle_nodes n ON n.chain_id = c.id AND n.level = l.level AND n."index" >= (c.last_position >> l.level)
              )::int AS nodes_beyond
         FROM chains c WHERE c.id = $1`,
      [chainId],
    )) as {
      position: string;
      checkpoints_above: number;
      smallest_above: string | null;
      events_beyond: number;
      first_beyond: string | null;
      nodes_beyond: number;
    }[];
    return {
      position: Number(row?.position ?? 0),
      checkpointsAbove: row?.checkpoints_above ?? 0,
      smallestAbove: Number(row?.smallest_above ?? 0),
      eventsBeyond: row?.events_beyond ?? 0,
      firstBeyond: Number(row?.first_beyond ?? 0),
      nodesBeyond: row?.nodes_beyond ?? 0,
    };
  }

  /** Oldest first by (createdAt, id), strictly after `cursor`: an index range scan on ix_chains_account_created. */
  async list(
    accountId: string,
    filters: { name?: string },
    limit: number,
    cursor?: { time: string; id: string },
    db: Db = this.pool,
  ): Promise<ChainRecord[]> {
    const where = ['c.account_id = $1'];
    const params: unknown[] = [accountId];
    if (filters.name !== undefined) {
      params.push(filters.name);
      where.push(`c.name = $${params.length}`);
    }
    if (cursor) {
      params.push(cursor.time, cursor.id);
      where.push(`(c.created_at, c.id) > ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(limit);
    const rows = (await db.query(
      `SELECT ${COLUMNS} FROM chains c WHERE ${where.join(' AND ')}
        ORDER BY c.created_at, c.id LIMIT $${params.length}`,
      params,
    )) as ChainRow[];
    return rows.map(toChainRecord);
  }

  /** One chain of this account, or null (also for another account's chain). */
  async findOwned(accountId: string, id: string, db: Db = this.pool): Promise<ChainRecord | null> {
    const [row] = (await db.query(`SELECT ${COLUMNS} FROM chains c WHERE c.id = $1 AND c.account_id = $2`, [
      id,
      accountId,
    ])) as ChainRow[];
    return row ? toChainRecord(row) : null;
  }

  /**
   * What each of these accounts' chains add up to, from the heads alone (no count over events:
   * positions are contiguous from 1, so a chain's size is its last position). Missing: no chains.
   */
  async totalsByAccount(
    accountIds: readonly string[],
    db: Db = this.pool,
  ): Promise<Map<string, { eventCount: number; chainCount: number; lastEventAt: Date | null }>> {
    const rows = (await db.query(
      `SELECT c.account_id AS "accountId", sum(c.last_position)::text AS events, count(*)::int AS chains,
              max(c.last_timestamp) AS "lastEventAt"
         FROM chains c WHERE c.account_id = ANY($1::varchar[]) GROUP BY c.account_id`,
      [accountIds],
    )) as { accountId: string; events: string; chains: number; lastEventAt: Date | null }[];
    return new Map(
      rows.map((r) => [
        r.accountId,
        { eventCount: Number(r.events), chainCount: r.chains, lastEventAt: r.lastEventAt },
      ]),
    );
  }

  /**
   * Creates the chains that do not exist yet. A racing creator (another request or instance)
   * wins: ON CONFLICT DO NOTHING waits for its commit, and the caller then uses its row.
   */
  async createMissing(chains: readonly { id: string; accountId: string; name: string }[], db: Db = this.pool) {
    await db.query(
      `INSERT INTO chains (id, account_id, name)
       SELECT w.id, w.account_id, w.name FROM unnest($1::varchar[], $2::varchar[], $3::varchar[]) AS w(id, account_id, name)
       WHERE NOT EXISTS (SELECT 1 FROM chains c WHERE c.account_id = w.account_id AND c.name = w.name)
       ON CONFLICT (account_id, name) DO NOTHING`,
      [chains.map((c) => c.id), chains.map((c) => c.accountId), chains.map((c) => c.name)],
    );
  }

  /**
   * Locks the heads of these chains (account + name) with `FOR UPDATE`, in id order, so that
   * concurrent transactions of this or another instance never deadlock and never fork a chain.
   * Chains that do not exist are missing from the answer.
   */
  async lockHeads(chains: readonly { accountId: string; name: string }[], db: Db = this.pool): Promise<ChainRecord[]> {
    const rows = (await db.query(
      `SELECT ${COLUMNS}
         FROM chains c JOIN unnest($1::varchar[], $2::varchar[]) AS w(account_id, name)
           ON c.account_id = w.account_id AND c.name = w.name
        ORDER BY c.id
          FOR UPDATE OF c`,
      [chains.map((c) => c.accountId), chains.map((c) => c.name)],
    )) as ChainRow[];
    return rows.map(toChainRecord);
  }

  /**
   * Moves every head in one statement; the caller holds their locks. `along`, a write of the same
   * transaction that need not see the heads move (the chains' new Merkle nodes), runs in the same
   * statement (`withWrite`): one round trip less under the locks.
   */
  async moveHeads(heads: readonly ChainHeadMove[], db: Db = this.pool, along: SqlQuery | null = null): Promise<void> {
    const move: SqlQuery = {
      text: `UPDATE chains SET last_position = h.position, last_hash = h.hash, last_timestamp = h.ts
         FROM unnest($1::varchar[], $2::int8[], $3::text[], $4::timestamptz[]) AS h(id, position, hash, ts)
        WHERE chains.id = h.id`,
      values: [
        heads.map((h) => h.id),
        heads.map((h) => h.lastPosition),
        heads.map((h) => h.lastHash),
        heads.map((h) => h.lastTimestamp.toISOString()),
      ],
    };
    const { text, values } = along ? withWrite(along, move) : move;
    await db.query(text, values);
  }
}
