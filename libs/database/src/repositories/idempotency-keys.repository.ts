import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Db } from '../transaction-runner';

/** A key's record as a later request with the same key sees it. */
export interface IdempotencyKeyRecord {
  requestDigest: string;
  /** The stored response (JSON text), or null while the first request has not committed. */
  response: string | null;
  /** Claimed longer ago than the stale threshold the caller gave. */
  stale: boolean;
}

/** One claim of one key: the same key claimed again (taken over) is another claim. */
export const claimId = (accountId: string, key: string, token: string): string =>
  `${accountId}\u0000${key}\u0000${token}`;

/** A claim older than $3 seconds: `find` calls it stale, and only such a claim (without a response) is taken over. */
const CLAIMED_BEFORE_STALE = 'claimed_at < now() - make_interval(secs => $3)';

/** Every query of the `idempotency_keys` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /**
   * Claims a free key: resolves to the claim's token, or null when someone holds the key. The
   * token is the claim's `claimed_at` as text (microseconds): a takeover moves it, so a request
   * whose claim was taken over can tell (see lockClaims).
   */
  async claim(accountId: string, key: string, requestDigest: string, db: Db = this.pool): Promise<string | null> {
    const [row] = (await db.query(
      `INSERT INTO idempotency_keys (account_id, key, request_digest) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING
       RETURNING claimed_at::text AS token`,
      [accountId, key, requestDigest],
    )) as { token: string }[];
    return row?.token ?? null;
  }

  /**
   * In the append's transaction, before anything is written: locks the claims that are still
   * held by these tokens and have no response, in (account, key) order, and answers which ones
   * (by claimId). A claim taken over meanwhile is not among them; a takeover tried while the
   * lock is held waits for the commit, then finds the response.
   */
  async lockClaims(
    claims: readonly { accountId: string; key: string; token: string }[],
    db: Db = this.pool,
  ): Promise<Set<string>> {
    if (claims.length === 0) return new Set();
    const rows = (await db.query(
      `SELECT k.account_id, k.key, w.token
         FROM idempotency_keys k JOIN unnest($1::varchar[], $2::varchar[], $3::text[]) AS w(account_id, key, token)
           ON k.account_id = w.account_id AND k.key = w.key AND k.claimed_at = w.token::timestamptz
        WHERE k.response IS NULL
        ORDER BY k.account_id, k.key
          FOR UPDATE OF k`,
      [claims.map((c) => c.accountId), claims.map((c) => c.key), claims.map((c) => c.token)],
    )) as { account_id: string; key: string; token: string }[];
    return new Set(rows.map((r) => claimId(r.account_id, r.key, r.token)));
  }

  async find(
    accountId: string,
    key: string,
    staleAfterSeconds: number,
    db: Db = this.pool,
  ): Promise<IdempotencyKeyRecord | null> {
    const [row] = (await db.query(
      `SELECT request_digest, response, ${CLAIMED_BEFORE_STALE} AS stale
         FROM idempotency_keys WHERE account_id = $1 AND key = $2`,
      [accountId, key, staleAfterSeconds],
    )) as { request_digest: string; response: string | null; stale: boolean }[];
    return row ? { requestDigest: row.request_digest, response: row.response, stale: row.stale } : null;
  }

  /**
   * Claims again a key whose claim is older than `staleAfterSeconds` and has no response:
   * resolves to the new claim's token, or null if it is not (or no longer) stale.
   */
  async takeOverStale(
    accountId: string,
    key: string,
    staleAfterSeconds: number,
    db: Db = this.pool,
  ): Promise<string | null> {
    // TypeORM answers an UPDATE with [rows, affected].
    const [taken] = (await db.query(
      `UPDATE idempotency_keys SET claimed_at = now()
        WHERE account_id = $1 AND key = $2 AND response IS NULL AND ${CLAIMED_BEFORE_STALE}
       RETURNING claimed_at::text AS token`,
      [accountId, key, staleAfterSeconds],
    )) as [{ token: string }[], number];
    return taken[0]?.token ?? null;
  }

  /** Frees a claim, still held by `token`, whose append wrote nothing. */
  async release(accountId: string, key: string, token: string, db: Db = this.pool): Promise<void> {
    await db.query(
      `DELETE FROM idempotency_keys
        WHERE account_id = $1 AND key = $2 AND claimed_at = $3::timestamptz AND response IS NULL`,
      [accountId, key, token],
    );
  }

  /** Stores the responses of claimed keys, in one statement (in the append's transaction). */
  async storeResponses(
    responses: readonly { accountId: string; key: string; response: string }[],
    db: Db = this.pool,
  ): Promise<void> {
    if (responses.length === 0) return;
    await db.query(
      `UPDATE idempotency_keys SET response = k.response
         FROM unnest($1::varchar[], $2::varchar[], $3::text[]) AS k(account_id, key, response)
        WHERE idempotency_keys.account_id = k.account_id AND idempotency_keys.key = k.key`,
      [responses.map((r) => r.accountId), responses.map((r) => r.key), responses.map((r) => r.response)],
    );
  }

  /** Deletes up to `limit` records claimed more than `hours` ago; resolves to how many. */
  async deleteClaimedBefore(hours: number, limit: number, db: Db = this.pool): Promise<number> {
    // TypeORM answers a DELETE with [rows, affected].
    const [, affected] = (await db.query(
      `DELETE FROM idempotency_keys
        WHERE (account_id, key) IN (
          SELECT account_id, key FROM idempotency_keys
           WHERE claimed_at < now() - make_interval(hours => $1)
           LIMIT $2)`,
      [hours, limit],
    )) as [unknown[], number];
    return affected;
  }
}
