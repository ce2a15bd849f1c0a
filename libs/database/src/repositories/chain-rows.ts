import { AccountEntity } from '../entities/account.entity';
import { ChainEntity } from '../entities/chain.entity';
import { asNumber, computed, joined, orNull, Selection, Table } from '../schema/table';

/**
 * What the chain repositories read of a chain (ChainHeadsRepository, ChainsRepository,
 * ChainRetentionRepository): the `chains` table as `c`, its account as `a`, and the two row shapes
 * they share, both derived from the entities.
 */
export const chains = new Table(ChainEntity, 'c');
export const chainAccounts = new Table(AccountEntity, 'a');

/**
 * A chain row: also the chain's head, moved forward in the same transaction as its events.
 * `firstPosition` is the first retained position (docs/contract.md §14): 1 until a prune,
 * lastPosition + 1 when all were pruned; `prunedHash` and `prunedTimestamp` are the hash and time of
 * the event at firstPosition − 1, the last pruned (null before any prune).
 */
export const CHAIN = chains.select(
  'id',
  'accountId',
  'name',
  'hashVersion',
  'lastPosition',
  'lastHash',
  'lastTimestamp',
  'createdAt',
  'firstPosition',
  'prunedHash',
  'prunedTimestamp',
);
export type ChainRecord = ReturnType<typeof CHAIN.decode>;

/** Who placed a legal hold (docs/contract.md §14): only an operator lifts an operator's. */
export type LegalHoldBy = NonNullable<ChainEntity['legalHoldBy']>;

/** CHAIN and the retention settings, the account's read through `a` (`STATUS_FROM` joins it). */
const CHAIN_STATUS = joined(
  CHAIN,
  joined(
    chains.select('retentionDays', 'legalHold', 'legalHoldBy'),
    chainAccounts.selectAs({
      accountRetentionDays: 'retentionDays',
      accountLegalHold: 'legalHold',
      accountLegalHoldBy: 'legalHoldBy',
    }),
  ),
  computed({
    /**
     * The retention that applies, as the database's policy computes it for the sweep
     * (audit_effective_retention_days: own, else the account's, an `_audit` chain's never below
     * retention_policy.audit_min_retention_days); null: forever.
     */
    effectiveRetentionDays: [
      `audit_effective_retention_days(${chains.column('name')}, ${chains.column('retentionDays')}, ${chainAccounts.column('retentionDays')})`,
      orNull(asNumber),
    ],
  }),
);
type ChainStatusRow = ReturnType<typeof CHAIN_STATUS.decode>;

/** A chain's retention settings and its account's (docs/contract.md §14), as chain status shows them. */
export type ChainRetention = Omit<ChainStatusRow, keyof ChainRecord>;

/** A chain row with its retention settings (status, list). */
export type ChainStatusRecord = ChainRecord & { retention: ChainRetention };

/** The tables a ChainStatusRecord is read from (`FROM ${STATUS_FROM} WHERE …`). */
export const STATUS_FROM = `${chains.name} c JOIN ${chainAccounts.name} a ON ${chainAccounts.column('id')} = ${chains.column('accountId')}`;

/** One row of CHAIN_STATUS as a ChainStatusRecord, its retention settings apart. */
function toChainStatusRecord(raw: Record<string, unknown>): ChainStatusRecord {
  const {
    retentionDays,
    effectiveRetentionDays,
    legalHold,
    legalHoldBy,
    accountRetentionDays,
    accountLegalHold,
    accountLegalHoldBy,
    ...chain
  } = CHAIN_STATUS.decode(raw);
  return {
    ...chain,
    retention: {
      retentionDays,
      effectiveRetentionDays,
      legalHold,
      legalHoldBy,
      accountRetentionDays,
      accountLegalHold,
      accountLegalHoldBy,
    },
  };
}

/** A chain with its retention settings (FROM STATUS_FROM). */
export const CHAIN_STATUS_RECORD: Selection<ChainStatusRecord> = { sql: CHAIN_STATUS.sql, decode: toChainStatusRecord };
