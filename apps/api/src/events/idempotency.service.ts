import { Injectable } from '@nestjs/common';
import { AppError, IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_TEXT } from '@app/common';
import { accountKey, ERASED_REQUEST_DIGEST, IdempotencyKeyRecord, IdempotencyKeysRepository } from '@app/database';
import { canonicalJson, sha256Hex } from '@app/hashing';
import { Replay } from './append/append-request';

/**
 * Idempotency-Key for POST /v1/events and POST /v1/events/batch (docs/contract.md §7, §9, §21). A key
 * is never claimed outside the append's transaction: the ledger locks it there (a transaction-scoped
 * advisory lock, taken without waiting) and stores the response with the events, so a request cut
 * by a failover, a killed connection or a crash leaves nothing behind and its retry is processed at
 * once. Later requests with the same key and body replay that response, with a different body get
 * 422, while the first is in flight 409: in flight on this instance by `whileInFlight`, on another
 * by the lock its transaction holds.
 */
@Injectable()
export class IdempotencyService {
  /** The keys (accountKey) of this instance's requests in flight, and the digest of each request. */
  private readonly inFlight = new Map<string, string>();

  constructor(private readonly keys: IdempotencyKeysRepository) {}

  static validate(key: string): void {
    if (!IDEMPOTENCY_KEY.test(key)) {
      throw AppError.validation([
        { field: 'Idempotency-Key', message: `Idempotency-Key must be ${IDEMPOTENCY_KEY_TEXT}` },
      ]);
    }
  }

  /** Of the endpoint and the request: keys are one namespace per account, a key used on another endpoint is a reuse (§9). */
  static digest(endpoint: string, request: unknown): string {
    return sha256Hex(canonicalJson({ endpoint, request }));
  }

  /**
   * What a request with `digest` gets from a key's stored record: its replay, a 422 for another
   * body, or null when the key is free (no record, or a claim an earlier version left unanswered).
   */
  static answer(record: IdempotencyKeyRecord | null, digest: string): Replay | AppError | null {
    if (record === null || record.response === null) return null;
    // An erasure rewrote this answer and forgot the request's digest (docs/contract.md §17): any body replays it.
    if (record.requestDigest !== digest && record.requestDigest !== ERASED_REQUEST_DIGEST)
      return IdempotencyService.reused();
    return new Replay(record.response);
  }

  /**
   * Runs `work` (the request with this key) unless a request with the key is in flight on this
   * instance: then 409, or 422 if that one has another body. The mark lives as long as `work`, in
   * this process: nothing outlives the request.
   */
  async whileInFlight<T>(accountId: string, key: string, digest: string, work: () => Promise<T>): Promise<T> {
    const id = accountKey(accountId, key);
    const running = this.inFlight.get(id);
    if (running !== undefined) throw running === digest ? IdempotencyService.inProgress() : IdempotencyService.reused();
    this.inFlight.set(id, digest);
    try {
      return await work();
    } finally {
      this.inFlight.delete(id);
    }
  }

  /** The stored answer to replay (or 422), read before queueing: a replay costs no transaction. Null: append. */
  async stored(accountId: string, key: string, digest: string): Promise<Replay | null> {
    const answer = IdempotencyService.answer(await this.keys.find(accountId, key), digest);
    if (answer instanceof AppError) throw answer;
    return answer;
  }

  /** 409: a request with this key is still being processed, here or on another instance. */
  static inProgress(): AppError {
    return new AppError(
      'IDEMPOTENCY_IN_PROGRESS',
      'A request with this Idempotency-Key is still being processed.',
      {},
      { 'Retry-After': '1' },
    );
  }

  /** 422: the key was used with another request body (or on the other append endpoint). */
  static reused(): AppError {
    return new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body.');
  }
}
