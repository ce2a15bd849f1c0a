import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ChainEntity } from '../entities/chain.entity';
import { CheckpointEntity } from '../entities/checkpoint.entity';
import { EventEntity } from '../entities/event.entity';
import { MerkleNodeEntity } from '../entities/merkle-node.entity';
import { asDate, asNumber, asString, computed, joined, orNull, selectRows, Table } from '../schema/table';
import { Db } from '../transaction-runner';
import { CHAIN_STATUS_RECORD, ChainStatusRecord, chains, STATUS_FROM } from './chain-rows';

const checkpoints = new Table(CheckpointEntity, 'k');
const events = new Table(EventEntity, 'e');
const nodes = new Table(MerkleNodeEntity, 'n');

/** The head now, and what lies above it (whole-chain verification's last look), read in one statement. */
const HEAD_FACTS = (() => {
  const head = chains.column('lastPosition');
  const [checkpointsAbove, eventsBeyond] = [
    `FROM checkpoints k WHERE ${checkpoints.column('chainId')} = c.id AND ${checkpoints.column('size')} > ${head}`,
    `FROM events e WHERE ${events.column('chainId')} = c.id AND ${events.column('position')} > ${head}`,
  ];
  return joined(
    chains.selectAs({ position: 'lastPosition' }),
    computed({
      checkpointsAbove: [`(SELECT count(*) ${checkpointsAbove})::int`, asNumber],
      smallestAbove: [`(SELECT min(${checkpoints.column('size')}) ${checkpointsAbove})::text`, orNull(asNumber)],
      eventsBeyond: [`(SELECT count(*) ${eventsBeyond})::int`, asNumber],
      firstBeyond: [`(SELECT min(${events.column('position')}) ${eventsBeyond})::text`, orNull(asNumber)],
      // Node (level, index) ends beyond the head when index >= head >> level: one index range per level.
      nodesBeyond: [
        `(SELECT count(*) FROM generate_series(0, 62) AS l(level)
            JOIN merkle_nodes n ON ${nodes.column('chainId')} = c.id AND ${nodes.column('level')} = l.level
             AND ${nodes.column('index')} >= (${head} >> l.level))::int`,
        asNumber,
      ],
    }),
  );
})();
type HeadFactsRow = ReturnType<typeof HEAD_FACTS.decode>;

/**
 * The head now, and what lies above it. `nodesBeyond`: merkle_nodes rows of subtrees that end
 * beyond the head, never written by the service (it stores a node once complete).
 */
export type HeadFacts = { [K in keyof HeadFactsRow]: NonNullable<HeadFactsRow[K]> };

/** The last pruned event's hash and time (ISO 8601, UTC, milliseconds). */
const PRUNED_LINK = computed<{ hash: NonNullable<ChainEntity['prunedHash']>; timestamp: string }>({
  hash: [`encode(${chains.column('prunedHash')}, 'hex')`, asString],
  timestamp: [
    `to_char(${chains.column('prunedTimestamp')} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`,
    asString,
  ],
});

/** What one account's chains add up to (its usage). */
const ACCOUNT_TOTALS = joined(
  chains.select('accountId'),
  computed<{ eventCount: number; chainCount: number; lastEventAt: ChainEntity['lastTimestamp'] }>({
    eventCount: [`sum(${chains.column('lastPosition')} - ${chains.column('firstPosition')} + 1)::text`, asNumber],
    chainCount: ['count(*)::int', asNumber],
    lastEventAt: [`max(${chains.column('lastTimestamp')})`, orNull(asDate)],
  }),
);

/**
 * The chains as they are read (not locked): listing and status, with their retention settings;
 * whole-chain and event verification's reads of a head; an account's totals. Methods take the
 * transaction's `db` last, defaulting to the pool.
 */
@Injectable()
export class ChainsRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** Oldest first by (createdAt, id), strictly after `cursor`: an index range scan on ix_chains_account_created. */
  async list(
    accountId: string,
    filters: { name?: string },
    limit: number,
    cursor?: { time: string; id: string },
    db: Db = this.pool,
  ): Promise<ChainStatusRecord[]> {
    const created = chains.column('createdAt');
    const where = [`${chains.column('accountId')} = $1`];
    const params: unknown[] = [ulidToUuid(accountId)];
    if (filters.name !== undefined) {
      params.push(filters.name);
      where.push(`${chains.column('name')} = $${params.length}`);
    }
    if (cursor) {
      params.push(cursor.time, ulidToUuid(cursor.id));
      where.push(`(${created}, c.id) > ($${params.length - 1}::timestamptz, $${params.length})`);
    }
    params.push(limit);
    return selectRows(
      db,
      CHAIN_STATUS_RECORD,
      `SELECT ${CHAIN_STATUS_RECORD.sql} FROM ${STATUS_FROM} WHERE ${where.join(' AND ')}
        ORDER BY ${created}, c.id LIMIT $${params.length}`,
      params,
    );
  }

  /** One chain of this account, or null (also for another account's chain). */
  async findOwned(accountId: string, id: string, db: Db = this.pool): Promise<ChainStatusRecord | null> {
    const [row] = await selectRows(
      db,
      CHAIN_STATUS_RECORD,
      `SELECT ${CHAIN_STATUS_RECORD.sql} FROM ${STATUS_FROM} WHERE c.id = $1 AND ${chains.column('accountId')} = $2`,
      [ulidToUuid(id), ulidToUuid(accountId)],
    );
    return row ?? null;
  }

  /** The head now, and what lies above it, read in one statement (one snapshot); zeros for an unknown chain. */
  async headFacts(chainId: string, db: Db = this.pool): Promise<HeadFacts> {
    const [row] = await selectRows(db, HEAD_FACTS, `SELECT ${HEAD_FACTS.sql} FROM chains c WHERE c.id = $1`, [
      ulidToUuid(chainId),
    ]);
    return {
      position: row?.position ?? 0,
      checkpointsAbove: row?.checkpointsAbove ?? 0,
      smallestAbove: row?.smallestAbove ?? 0,
      eventsBeyond: row?.eventsBeyond ?? 0,
      firstBeyond: row?.firstBeyond ?? 0,
      nodesBeyond: row?.nodesBeyond ?? 0,
    };
  }

  /**
   * The hash and time of the last pruned event when `position` is the chain's first retained one
   * (docs/contract.md §14: what that event's link is checked against); null otherwise.
   */
  async prunedLinkFacts(
    accountId: string,
    chainId: string,
    position: number,
    db: Db = this.pool,
  ): Promise<ReturnType<typeof PRUNED_LINK.decode> | null> {
    const [row] = await selectRows(
      db,
      PRUNED_LINK,
      `SELECT ${PRUNED_LINK.sql} FROM chains c
        WHERE c.id = $1 AND ${chains.column('accountId')} = $2 AND ${chains.column('firstPosition')} = $3
          AND ${chains.column('prunedHash')} IS NOT NULL`,
      [ulidToUuid(chainId), ulidToUuid(accountId), position],
    );
    return row ?? null;
  }

  /**
   * What each of these accounts' chains add up to, from the heads alone (no count over events:
   * positions are contiguous from 1, so a chain's size is its last position). Missing: no chains.
   */
  async totalsByAccount(
    accountIds: readonly string[],
    db: Db = this.pool,
  ): Promise<Map<string, Omit<ReturnType<typeof ACCOUNT_TOTALS.decode>, 'accountId'>>> {
    const account = chains.column('accountId');
    const rows = await selectRows(
      db,
      ACCOUNT_TOTALS,
      `SELECT ${ACCOUNT_TOTALS.sql} FROM chains c WHERE ${account} = ANY($1::uuid[]) GROUP BY ${account}`,
      [accountIds.map(ulidToUuid)],
    );
    return new Map(rows.map(({ accountId, ...totals }) => [accountId, totals]));
  }
}
