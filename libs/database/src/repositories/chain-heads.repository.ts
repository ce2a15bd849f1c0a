import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ChainEntity } from '../entities/chain.entity';
import { asNumber, computed, joined, selectRows } from '../schema/table';
import { Db } from '../transaction-runner';
import { CHAIN, chains } from './chain-rows';
import { SqlQuery, withWrite } from './sql-query';

/** Where a chain's head stands after the events an append gives it. */
export type ChainHeadMove = Pick<ChainEntity, 'id' | 'lastPosition' | 'lastHash'> & {
  lastTimestamp: NonNullable<ChainEntity['lastTimestamp']>;
};

/**
 * A locked head and its account's action schema generation (the greatest action_schemas id of the
 * account, 0 without any: docs/contract.md §19), read in the same statement: an append whose events
 * were checked against an older generation is written again (docs/schemas.md, "Consistency").
 */
const LOCKED_HEAD = joined(
  CHAIN,
  computed({
    schemaGeneration: [
      `coalesce((SELECT max(s.id) FROM action_schemas s WHERE s.account_id = ${chains.column('accountId')}), 0)`,
      asNumber,
    ],
  }),
);
export type LockedChainHead = ReturnType<typeof LOCKED_HEAD.decode>;

/** What a checkpoint signs over: the head's size and hash, and the first retained position. */
const SHARED_HEAD = chains.selectAs({ size: 'lastPosition', hash: 'lastHash', firstPosition: 'firstPosition' });

/**
 * The chains' heads as appends and checkpoints lock them: an append creates its chains, locks their
 * heads FOR UPDATE and moves them in the transaction of its events (the hot path: every statement
 * here is waited for under the chains' locks); a checkpoint holds its head FOR SHARE. Methods take
 * the transaction's `db` last, defaulting to the pool.
 */
@Injectable()
export class ChainHeadsRepository {
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
  ): Promise<ReturnType<typeof SHARED_HEAD.decode> | null> {
    const [row] = await selectRows(
      db,
      SHARED_HEAD,
      `SELECT ${SHARED_HEAD.sql} FROM chains c WHERE c.id = $1 AND ${chains.column('accountId')} = $2 FOR SHARE`,
      [ulidToUuid(chainId), ulidToUuid(accountId)],
    );
    return row ?? null;
  }

  /**
   * Creates the chains that do not exist yet. A racing creator (another request or instance)
   * wins: ON CONFLICT DO NOTHING waits for its commit, and the caller then uses its row.
   */
  async createMissing(
    wanted: readonly Pick<ChainEntity, 'id' | 'accountId' | 'name'>[],
    db: Db = this.pool,
  ): Promise<void> {
    const [account, name] = [chains.bare('accountId'), chains.bare('name')];
    await db.query(
      `INSERT INTO chains (id, ${account}, ${name})
       SELECT w.id, w.account_id, w.name FROM unnest($1::uuid[], $2::uuid[], $3::varchar[]) AS w(id, account_id, name)
       WHERE NOT EXISTS (SELECT 1 FROM chains c WHERE ${chains.column('accountId')} = w.account_id AND ${chains.column('name')} = w.name)
       ON CONFLICT (${account}, ${name}) DO NOTHING`,
      [wanted.map((c) => ulidToUuid(c.id)), wanted.map((c) => ulidToUuid(c.accountId)), wanted.map((c) => c.name)],
    );
  }

  /**
   * Locks the heads of these chains (account + name) with `FOR UPDATE`, in id order, so that
   * concurrent transactions of this or another instance never deadlock and never fork a chain.
   * Chains that do not exist are missing from the answer. Each comes with its account's schema
   * generation, read by the same statement.
   */
  async lockHeads(
    wanted: readonly Pick<ChainEntity, 'accountId' | 'name'>[],
    db: Db = this.pool,
  ): Promise<LockedChainHead[]> {
    return selectRows(
      db,
      LOCKED_HEAD,
      `SELECT ${LOCKED_HEAD.sql}
         FROM chains c JOIN unnest($1::uuid[], $2::varchar[]) AS w(account_id, name)
           ON ${chains.column('accountId')} = w.account_id AND ${chains.column('name')} = w.name
        ORDER BY c.id
          FOR UPDATE OF c`,
      [wanted.map((c) => ulidToUuid(c.accountId)), wanted.map((c) => c.name)],
    );
  }

  /**
   * Moves every head in one statement; the caller holds their locks. `along`, a write of the same
   * transaction that need not see the heads move (the chains' new Merkle nodes), runs in the same
   * statement (`withWrite`): one round trip less under the locks.
   */
  async moveHeads(heads: readonly ChainHeadMove[], db: Db = this.pool, along: SqlQuery | null = null): Promise<void> {
    const move: SqlQuery = {
      text: `UPDATE chains SET ${chains.bare('lastPosition')} = h.position, ${chains.bare('lastHash')} = decode(h.hash, 'hex'), ${chains.bare('lastTimestamp')} = h.ts
         FROM unnest($1::uuid[], $2::int8[], $3::text[], $4::timestamptz[]) AS h(id, position, hash, ts)
        WHERE chains.id = h.id`,
      values: [
        heads.map((h) => ulidToUuid(h.id)),
        heads.map((h) => h.lastPosition),
        heads.map((h) => h.lastHash),
        heads.map((h) => h.lastTimestamp.toISOString()),
      ],
    };
    const { text, values } = along ? withWrite(along, move) : move;
    await db.query(text, values);
  }
}
