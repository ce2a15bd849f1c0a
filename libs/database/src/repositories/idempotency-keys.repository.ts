import { ulidToUuid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { IdempotencyKeyEntity } from '../entities/idempotency-key.entity';
import { asBoolean, asNumber, asString, computed, joined, selectRows, Table } from '../schema/table';
import { Db } from '../transaction-runner';

const keys = new Table(IdempotencyKeyEntity, 'k');
const [ACCOUNT_ID, KEY, CLAIMED_AT, RESPONSE] = [
  keys.column('accountId'),
  keys.column('key'),
  keys.column('claimedAt'),
  keys.column('response'),
];

/** A claim older than $3 seconds: `find` calls it stale, and only such a claim (without a response) is taken over. */
const CLAIMED_BEFORE_STALE = `${CLAIMED_AT} < now() - make_interval(secs => $3)`;

/**
 * A key's record as a later request with the same key sees it: the request it was first used with,
 * the stored response (JSON text, null while the first request has not committed), and whether it
 * was claimed longer ago than the stale threshold the caller gave.
 */
const RECORD = joined(keys.select('requestDigest', 'response'), computed({ stale: [CLAIMED_BEFORE_STALE, asBoolean] }));
export type IdempotencyKeyRecord = ReturnType<typeof RECORD.decode>;

/** A claim's token: its `claimed_at` as text (microseconds), of the row aliased `k`. */
const TOKEN = computed({ token: [`${CLAIMED_AT}::text`, asString] });

/**
 * The request digest of a record whose answer an erasure rewrote (docs/contract.md §17): the digest of
 * the original body (an unsalted hash of erased values) is not kept, so a later request with the key
 * replays the answer whatever its body. No SHA-256 hex digest is ever this.
 */
export const ERASED_REQUEST_DIGEST = '-'.repeat(64);

/** A stored answer, by key. */
const ANSWER = keys.select('key', 'response');
export type StoredAnswer = ReturnType<typeof ANSWER.decode>;

/** One claim of one key: the same key claimed again (taken over) is another claim. */
export const claimId = (accountId: string, key: string, token: string): string =>
  `${accountId}\u0000${key}\u0000${token}`;

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
    const inserted = (['accountId', 'key', 'requestDigest'] as const).map((p) => keys.bare(p)).join(', ');
    const [row] = await selectRows(
      db,
      TOKEN,
      `INSERT INTO idempotency_keys AS k (${inserted}) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING
       RETURNING ${TOKEN.sql}`,
      [ulidToUuid(accountId), key, requestDigest],
    );
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
    const held = joined(keys.select('accountId', 'key'), computed({ token: ['w.token', asString] }));
    const rows = await selectRows(
      db,
      held,
      `SELECT ${held.sql}
         FROM idempotency_keys k JOIN unnest($1::uuid[], $2::varchar[], $3::text[]) AS w(account_id, key, token)
           ON ${ACCOUNT_ID} = w.account_id AND ${KEY} = w.key AND ${CLAIMED_AT} = w.token::timestamptz
        WHERE ${RESPONSE} IS NULL
        ORDER BY ${ACCOUNT_ID}, ${KEY}
          FOR UPDATE OF k`,
      [claims.map((c) => ulidToUuid(c.accountId)), claims.map((c) => c.key), claims.map((c) => c.token)],
    );
    return new Set(rows.map((r) => claimId(r.accountId, r.key, r.token)));
  }

  async find(
    accountId: string,
    key: string,
    staleAfterSeconds: number,
    db: Db = this.pool,
  ): Promise<IdempotencyKeyRecord | null> {
    const [row] = await selectRows(
      db,
      RECORD,
      `SELECT ${RECORD.sql} FROM idempotency_keys k WHERE ${ACCOUNT_ID} = $1 AND ${KEY} = $2`,
      [ulidToUuid(accountId), key, staleAfterSeconds],
    );
    return row ?? null;
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
    const [taken] = await selectRows(
      db,
      TOKEN,
      `WITH k AS (
         UPDATE idempotency_keys k SET ${keys.bare('claimedAt')} = now()
          WHERE ${ACCOUNT_ID} = $1 AND ${KEY} = $2 AND ${RESPONSE} IS NULL
            AND ${CLAIMED_BEFORE_STALE}
         RETURNING ${CLAIMED_AT})
       SELECT ${TOKEN.sql} FROM k`,
      [ulidToUuid(accountId), key, staleAfterSeconds],
    );
    return taken?.token ?? null;
  }

  /** Frees a claim, still held by `token`, whose append wrote nothing. */
  async release(accountId: string, key: string, token: string, db: Db = this.pool): Promise<void> {
    await db.query(
      `DELETE FROM idempotency_keys k
        WHERE ${ACCOUNT_ID} = $1 AND ${KEY} = $2 AND ${CLAIMED_AT} = $3::timestamptz
          AND ${RESPONSE} IS NULL`,
      [ulidToUuid(accountId), key, token],
    );
  }

  /** Stores the responses of claimed keys, in one statement (in the append's transaction). */
  async storeResponses(
    responses: readonly { accountId: string; key: string; response: string }[],
    db: Db = this.pool,
  ): Promise<void> {
    if (responses.length === 0) return;
    await db.query(
      `UPDATE idempotency_keys k SET ${keys.bare('response')} = r.response
         FROM unnest($1::uuid[], $2::varchar[], $3::text[]) AS r(account_id, key, response)
        WHERE ${ACCOUNT_ID} = r.account_id AND ${KEY} = r.key`,
      [responses.map((r) => ulidToUuid(r.accountId)), responses.map((r) => r.key), responses.map((r) => r.response)],
    );
  }

  /** The account's stored answers that hold any of `eventIds` (anywhere in their JSON, as an `id`). */
  async answersHolding(accountId: string, eventIds: readonly string[], db: Db = this.pool): Promise<StoredAnswer[]> {
    if (eventIds.length === 0) return [];
    return selectRows(
      db,
      ANSWER,
      `SELECT ${ANSWER.sql} FROM idempotency_keys k
        WHERE ${ACCOUNT_ID} = $1 AND ${RESPONSE} IS NOT NULL
          AND EXISTS (SELECT 1 FROM jsonb_path_query(${RESPONSE}::jsonb, 'lax $.**.id') AS x(v)
                       WHERE x.v #>> '{}' = ANY($2::varchar[]))`,
      [ulidToUuid(accountId), eventIds],
    );
  }

  /** Replaces answers an erasure rewrote, forgetting the digest of the request each answered (ERASED_REQUEST_DIGEST). */
  async replaceErasedAnswers(accountId: string, answers: readonly StoredAnswer[], db: Db): Promise<void> {
    if (answers.length === 0) return;
    await db.query(
      `UPDATE idempotency_keys k SET ${keys.bare('response')} = r.response, ${keys.bare('requestDigest')} = $4
         FROM unnest($2::varchar[], $3::text[]) AS r(key, response)
        WHERE ${ACCOUNT_ID} = $1 AND ${KEY} = r.key`,
      [ulidToUuid(accountId), answers.map((a) => a.key), answers.map((a) => a.response), ERASED_REQUEST_DIGEST],
    );
  }

  /** Deletes up to `limit` records claimed more than `hours` ago; resolves to how many. */
  async deleteClaimedBefore(hours: number, limit: number, db: Db = this.pool): Promise<number> {
    const deleted = computed({ n: ['count(*)', asNumber] });
    const pk = `${keys.bare('accountId')}, ${keys.bare('key')}`;
    const [row] = await selectRows(
      db,
      deleted,
      `WITH k AS (
         DELETE FROM idempotency_keys
          WHERE (${pk}) IN (
            SELECT ${pk} FROM idempotency_keys
             WHERE ${keys.bare('claimedAt')} < now() - make_interval(hours => $1)
             LIMIT $2)
         RETURNING 1)
       SELECT ${deleted.sql} FROM k`,
      [hours, limit],
    );
    return row?.n ?? 0;
  }
}
