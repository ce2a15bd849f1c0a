import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { selectRows } from '../schema/table';
import { Db } from '../transaction-runner';
import { chains, events } from './event-record';

/** What the lookup reads: the time of the entry found. */
const AT = events.selectAs({ at: 'timestamp' });

/**
 * Whether an operator's read of an account was recorded lately (docs/contract.md §12: `operator.read`, at
 * most once an hour per key and account). Decided in the database, so every instance sharing it agrees:
 * `lock` serializes the instances deciding for one key and account, and `lastSince` reads the
 * entry itself from the account's `_audit` chain (no table of its own: the chain is the record).
 */
@Injectable()
export class OperatorReadsRepository {
  /** Holds, until `tx` ends, every other transaction deciding for this key and account (an advisory lock). */
  async lock(accountId: string, keyId: string, tx: Db): Promise<void> {
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended('audit.operator_read:' || $1::text, 0))`, [
      `${accountId}/${keyId}`,
    ]);
  }

  /**
   * The time of the latest `action` by `actor` in the account's chain `chainName` after `since`, or
   * null: an index range of ix_events_account_actor (account, actor, timestamp), newest first.
   */
  async lastSince(
    accountId: string,
    chainName: string,
    actor: string,
    action: string,
    since: Date,
    tx: Db,
  ): Promise<Date | null> {
    const [row] = await selectRows(
      tx,
      AT,
      `SELECT ${AT.sql} FROM events e JOIN chains c ON c.id = e.chain_id
        WHERE e.account_id = $1 AND e.actor = $2 AND e.action = $3 AND ${events.column('timestamp')} > $4
          AND ${chains.column('name')} = $5
        ORDER BY ${events.column('timestamp')} DESC LIMIT 1`,
      [ulidToUuid(accountId), actor, action, since, chainName],
    );
    return row?.at ?? null;
  }
}
