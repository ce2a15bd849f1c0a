import { Db } from '../transaction-runner';

/**
 * Serializes an account's legal hold changes (its own and its chains') with its erasures
 * (docs/contract.md §14, §17): a transaction-scoped advisory lock per account. An erasure takes it
 * before it reads which matches are held, a hold change before it writes; so an erasure never
 * commits over a hold placed while it ran (it waits for that hold's commit and then sees it, or
 * the hold waits for the erasure). Appends never take it: an erasure does not hold them up.
 */
export async function lockLegalHolds(accountId: string, db: Db): Promise<void> {
  await db.query(`SELECT pg_advisory_xact_lock(hashtextextended('audit.legal_hold:' || $1::text, 0))`, [accountId]);
}
