import { createHash } from 'node:crypto';
import { ulidToUuid, uuidToUlid } from '@app/common/ids';
import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { IdempotencyKeyEntity } from '../entities/idempotency-key.entity';
import { asNumber, asString, computed, joined, selectRows, Table } from '../schema/table';
import { Db } from '../transaction-runner';

const keys = new Table(IdempotencyKeyEntity, 'k');
const [ACCOUNT_ID, KEY, RESPONSE] = [keys.column('accountId'), keys.column('key'), keys.column('response')];

/**
 * A key's record as a later request with the same key sees it: the digest of the request it was
 * first used with, and the stored response (JSON text). Null response: a claim an earlier version
 * of the service made before its append and did not free (it claimed keys outside the append's
 * transaction); nobody holds it, the next request with the key takes it over.
 */
const RECORD = keys.select('requestDigest', 'response');
export type IdempotencyKeyRecord = ReturnType<typeof RECORD.decode>;

/** A record with its (account, key), as the append's transaction reads the keys it locked. */
const LOCKED = joined(keys.select('accountId', 'key'), RECORD);

/**
 * The request digest of a record whose answer an erasure rewrote (docs/contract.md §17): the digest of
 * the original body (an unsalted hash of erased values) is not kept, so a later request with the key
 * replays the answer whatever its body. No SHA-256 hex digest is ever this.
 */
export const ERASED_REQUEST_DIGEST = '-'.repeat(64);

/** A stored answer, by key. */
const ANSWER = keys.select('key', 'response');
export type StoredAnswer = ReturnType<typeof ANSWER.decode>;

/** One Idempotency-Key of one account, as one string (keys are printable ASCII: no NUL inside). */
export const accountKey = (accountId: string, key: string): string => `${accountId}\u0000${key}`;

/**
 * The transaction-scoped advisory lock of an Idempotency-Key (docs/contract.md §7, §21): the first 64
 * bits of a SHA-256 of the account and the key (the account's id has a fixed length, so no two pairs
 * give one text; a cryptographic hash, so no client can pick a key whose lock is another account's).
 * Taken with pg_try_advisory_xact_lock: it dies with its transaction or its connection, however they end.
 */
export function keyLockId(accountId: string, key: string): string {
  const digest = createHash('sha256').update(`audit.idempotency:${accountId}:${key}`).digest();
  return digest.readBigInt64BE(0).toString();
}

/** An (account uuid, key) pair of the lock query's input. */
const PAIR = computed({ accountUuid: ['w.account_id::text', asString], key: ['w.key', asString] });

/** Every query of the `idempotency_keys` table. Methods take the transaction's `db` last, defaulting to the pool. */
@Injectable()
export class IdempotencyKeysRepository {
  constructor(@InjectDataSource() private readonly dataSource: DataSource) {}

  private get pool(): Db {
    return this.dataSource.manager;
  }

  /** The key's record, or null: outside any transaction, to replay a stored answer without queueing. */
  async find(accountId: string, key: string, db: Db = this.pool): Promise<IdempotencyKeyRecord | null> {
    const [row] = await selectRows(
      db,
      RECORD,
      `SELECT ${RECORD.sql} FROM idempotency_keys k WHERE ${ACCOUNT_ID} = $1 AND ${KEY} = $2`,
      [ulidToUuid(accountId), key],
    );
    return row ?? null;
  }

  /**
   * In the append's transaction, before anything is written (docs/contract.md §7, §21): takes the
   * advisory lock of each key that no other transaction holds, without waiting, then reads the
   * records of the keys it locked (row locks too, in key order: an erasure rewriting an answer, or a
   * claim of an earlier version, is waited for). Answers, by accountKey, the record (or null) of
   * each key locked; a key missing from the answer is held by a transaction still running.
   *
   * Two statements, because the second must see what the holder of a lock committed just before
   * releasing it: in READ COMMITTED each statement reads the commits made before it starts.
   */
  async lockKeys(
    wanted: readonly { accountId: string; key: string }[],
    db: Db,
  ): Promise<Map<string, IdempotencyKeyRecord | null>> {
    if (wanted.length === 0) return new Map();
    const locked = await selectRows(
      db,
      PAIR,
      `SELECT ${PAIR.sql}
         FROM unnest($1::uuid[], $2::varchar[], $3::int8[]) AS w(account_id, key, lock)
        WHERE pg_try_advisory_xact_lock(w.lock)`,
      [
        wanted.map((w) => ulidToUuid(w.accountId)),
        wanted.map((w) => w.key),
        wanted.map((w) => keyLockId(w.accountId, w.key)),
      ],
    );
    const records = new Map<string, IdempotencyKeyRecord | null>();
    if (locked.length === 0) return records;
    for (const l of locked) records.set(accountKey(uuidToUlid('acc', l.accountUuid), l.key), null);
    const rows = await selectRows(
      db,
      LOCKED,
      `SELECT ${LOCKED.sql}
         FROM idempotency_keys k JOIN unnest($1::uuid[], $2::varchar[]) AS w(account_id, key)
           ON ${ACCOUNT_ID} = w.account_id AND ${KEY} = w.key
        ORDER BY ${ACCOUNT_ID}, ${KEY}
          FOR UPDATE OF k`,
      [locked.map((l) => l.accountUuid), locked.map((l) => l.key)],
    );
    for (const { accountId, key, ...record } of rows) records.set(accountKey(accountId, key), record);
    return records;
  }

  /**
   * Stores the answers of the keys this transaction locked and appended under, in one statement (in
   * the append's transaction): a new record, or over a claim an earlier version left (lockKeys).
   */
  async store(
    answers: readonly { accountId: string; key: string; requestDigest: string; response: string }[],
    db: Db,
  ): Promise<void> {
    if (answers.length === 0) return;
    const columns = (['accountId', 'key', 'requestDigest', 'response'] as const).map((p) => keys.bare(p));
    await db.query(
      `INSERT INTO idempotency_keys AS k (${columns.join(', ')})
       SELECT * FROM unnest($1::uuid[], $2::varchar[], $3::char(64)[], $4::text[])
       ON CONFLICT (${columns[0]}, ${columns[1]}) DO UPDATE
         SET ${columns[2]} = excluded.${columns[2]}, ${columns[3]} = excluded.${columns[3]},
             ${keys.bare('claimedAt')} = now()`,
      [
        answers.map((a) => ulidToUuid(a.accountId)),
        answers.map((a) => a.key),
        answers.map((a) => a.requestDigest),
        answers.map((a) => a.response),
      ],
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
