import { Injectable } from '@nestjs/common';
import { AppConfig, AppError, IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_TEXT } from '@app/common';
import { ERASED_REQUEST_DIGEST, IdempotencyKeysRepository } from '@app/database';
import { canonicalJson, sha256Hex } from '@app/hashing';

/** A claim's token tells the append's transaction whether the claim is still this request's. */
export type Claim = { kind: 'claimed'; token: string } | { kind: 'replay'; json: string };

/**
 * Idempotency-Key for POST /v1/events and POST /v1/events/batch (docs/contract.md §7, §9). The first request claims the key; the
 * ledger stores its response in the same transaction as its event; later requests with the same
 * key and body replay that response, with a different body get 422, while in flight 409.
 */
@Injectable()
export class IdempotencyService {
  constructor(
    private readonly keys: IdempotencyKeysRepository,
    private readonly config: AppConfig,
  ) {}

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

  async claim(accountId: string, key: string, digest: string): Promise<Claim> {
    const staleAfter = this.config.idempotencyStaleClaimSeconds;
    // Twice at most: a claim released between our insert and our read is simply claimed again, a
    // stale claim whose request committed while we tried to take it over is read again (replay).
    for (let attempt = 0; attempt < 2; attempt++) {
      const token = await this.keys.claim(accountId, key, digest);
      if (token !== null) return { kind: 'claimed', token };
      const row = await this.keys.find(accountId, key, staleAfter);
      if (!row) continue;
      // An erasure rewrote this answer and forgot the request's digest (docs/contract.md §17): any body replays it.
      if (row.requestDigest !== digest && row.requestDigest !== ERASED_REQUEST_DIGEST) {
        throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body.');
      }
      if (row.response !== null) return { kind: 'replay', json: row.response };
      if (!row.stale) throw IdempotencyService.inProgress();
      const taken = await this.keys.takeOverStale(accountId, key, staleAfter);
      if (taken !== null) return { kind: 'claimed', token: taken };
    }
    throw IdempotencyService.inProgress();
  }

  /** 409: the key's first request has not committed (or its claim was taken over). */
  static inProgress(): AppError {
    return new AppError(
      'IDEMPOTENCY_IN_PROGRESS',
      'A request with this Idempotency-Key is still being processed.',
      {},
      { 'Retry-After': '1' },
    );
  }

  /** After a failed append: nothing was written, so the client may retry with the same key. */
  async release(accountId: string, key: string, token: string): Promise<void> {
    await this.keys.release(accountId, key, token);
  }
}
