import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { ChainEntity } from '../entities/chain.entity';
import { EventEntity } from '../entities/event.entity';
import { asNumber, computed, joined, selectRows, Table } from '../schema/table';
import { Db } from '../transaction-runner';
import { lockLegalHolds } from './legal-hold-lock';
import { CHAIN_STATUS_RECORD, chainAccounts, ChainStatusRecord, chains, LegalHoldBy, STATUS_FROM } from './chain-rows';

const events = new Table(EventEntity, 'e');

/** A chain the retention sweep may prune now: not on hold, a retention, its first retained event old enough. */
const PRUNABLE = joined(
  chains.select('id', 'accountId'),
  computed<{ retentionDays: NonNullable<ChainEntity['retentionDays']> }>({ retentionDays: ['r.days', asNumber] }),
);
export type PrunableChain = ReturnType<typeof PRUNABLE.decode>;

/** What one update of a chain's settings touched: its id, read back through the CTE `c`. */
const UPDATED = chains.select('id');

/**
 * A chain's retention (docs/contract.md §14): its settings (retention, legal hold), and the sweep's
 * calls (which chains to prune, one batch of a prune). Methods take the transaction's `db` last,
 * defaulting to the pool.
 */
@Injectable()
export class ChainRetentionRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /**
   * A chain whose settings are about to change, locked (FOR NO KEY UPDATE, as the UPDATE would) until
   * the transaction ends, so that who placed its hold is decided on what is committed: of this
   * account, or of any account when `accountId` is null (an operator's, docs/contract.md §14). Null: no such chain.
   */
  async lockForSettings(accountId: string | null, id: string, db: Db): Promise<ChainStatusRecord | null> {
    const [row] = await selectRows(
      db,
      CHAIN_STATUS_RECORD,
      `SELECT ${CHAIN_STATUS_RECORD.sql} FROM ${STATUS_FROM}
        WHERE c.id = $1 AND ($2::uuid IS NULL OR ${chains.column('accountId')} = $2) FOR NO KEY UPDATE OF c`,
      [ulidToUuid(id), accountId === null ? null : ulidToUuid(accountId)],
    );
    return row ?? null;
  }

  /** Sets the chain's own retention (null: follow the account); false for an unknown chain or another account's. */
  async setRetention(accountId: string, id: string, days: number | null, db: Db = this.pool): Promise<boolean> {
    return this.update(`${chains.bare('retentionDays')} = $3`, [id, accountId, days], db);
  }

  /**
   * Puts the chain on legal hold (with its reason and who placed it: `by`) or lifts it (`by` null);
   * false for an unknown chain or another account's.
   */
  async setLegalHold(
    accountId: string,
    id: string,
    hold: { hold: boolean; reason: string | null; by: LegalHoldBy | null },
    db: Db = this.pool,
  ): Promise<boolean> {
    await lockLegalHolds(accountId, db);
    const set = (['legalHold', 'legalHoldReason', 'legalHoldBy'] as const).map(
      (p, i) => `${chains.bare(p)} = $${i + 3}`,
    );
    return this.update(set.join(', '), [id, accountId, hold.hold, hold.reason, hold.by], db);
  }

  /**
   * The chains a retention sweep would prune now (of one account, or all): neither the chain nor its
   * account on hold, a retention that is not forever, and the first retained event older than it,
   * `now` being the database's clock plus `clockOffsetSeconds`, the retention the database's
   * (audit_effective_retention_days), and no hold of it or its account lifted less than
   * HOLD_RELEASE_DELAY_HOURS ago (audit_hold_lifted_recently). audit_prune_chain checks all of it
   * again under the chain's lock; this only spares the others a transaction.
   */
  async prunable(clockOffsetSeconds: number, accountId: string | null, db: Db = this.pool): Promise<PrunableChain[]> {
    const [account, first] = [chains.column('accountId'), chains.column('firstPosition')];
    return selectRows(
      db,
      PRUNABLE,
      `SELECT ${PRUNABLE.sql}
         FROM ${STATUS_FROM}
        CROSS JOIN LATERAL (SELECT audit_effective_retention_days(${chains.column('name')}, ${chains.column('retentionDays')}, ${chainAccounts.column('retentionDays')}) AS days) r
        WHERE NOT ${chains.column('legalHold')} AND NOT ${chainAccounts.column('legalHold')} AND r.days IS NOT NULL
          AND ${first} <= ${chains.column('lastPosition')} AND ($2::uuid IS NULL OR ${account} = $2)
          AND EXISTS (SELECT 1 FROM events e WHERE ${events.column('chainId')} = c.id AND ${events.column('position')} = ${first}
                         AND ${events.column('timestamp')} < now() + make_interval(secs => $1::bigint) - make_interval(days => r.days))
          AND NOT audit_hold_lifted_recently(c.id, ${account}, now() + make_interval(secs => $1::bigint))
        ORDER BY c.id`,
      [clockOffsetSeconds, accountId === null ? null : ulidToUuid(accountId)],
    );
  }

  /**
   * Takes the chain's row lock FOR UPDATE, as appends do, until the caller's transaction ends: a
   * prune batch takes it first, so that the sweep can time how long it holds it (not how long it
   * waited for an append to let go of it). audit_prune_chain takes it again, a no-op then.
   */
  async lockForPrune(chainId: string, db: Db): Promise<void> {
    await db.query(`SELECT 1 FROM chains WHERE id = $1 FOR UPDATE`, [ulidToUuid(chainId)]);
  }

  /**
   * One batch of a chain's prune, in the caller's transaction: audit_prune_chain (migration
   * 1764800000000) locks the chain's row as appends do, checks the policy itself and deletes at
   * most `maxEvents` of the prefix older than the retention, none above position `upTo`. What it
   * deleted: positions `from` … `to` (none when `deleted` is 0).
   */
  async pruneBatch(
    chainId: string,
    upTo: number,
    maxEvents: number,
    clockOffsetSeconds: number,
    db: Db = this.pool,
  ): Promise<{ deleted: number; from: number; to: number }> {
    const pruned = computed({ deleted: ['audit_prune_chain($1, $2, $3, $4)::float8', asNumber] });
    const [batch] = await selectRows(db, pruned, `SELECT ${pruned.sql}`, [
      ulidToUuid(chainId),
      upTo,
      maxEvents,
      clockOffsetSeconds,
    ]);
    const first = chains.select('firstPosition');
    const [chain] = await selectRows(db, first, `SELECT ${first.sql} FROM chains c WHERE c.id = $1`, [
      ulidToUuid(chainId),
    ]);
    const deleted = batch?.deleted ?? 0;
    const to = (chain?.firstPosition ?? 1) - 1;
    return { deleted, from: to - deleted + 1, to };
  }

  /** One UPDATE of the chain `$1` of the account `$2`: `set` with its values from `$3`; false when no row matched. */
  private async update(
    set: string,
    [id, accountId, ...values]: [string, string, ...unknown[]],
    db: Db,
  ): Promise<boolean> {
    const rows = await selectRows(
      db,
      UPDATED,
      `WITH c AS (UPDATE chains SET ${set} WHERE id = $1 AND ${chains.bare('accountId')} = $2 RETURNING id)
       SELECT ${UPDATED.sql} FROM c`,
      [ulidToUuid(id), ulidToUuid(accountId), ...values],
    );
    return rows.length === 1;
  }
}
