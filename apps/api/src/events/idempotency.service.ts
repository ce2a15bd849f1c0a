import { Injectable } from '@nestjs/common';
import { AppError } from '@app/common';
import { IdempotencyKeysRepository } from '@app/database';
import { canonicalJson, sha256Hex } from '@app/hashing';

/** A claim older than this whose append never committed belongs to a request that died. */
const STALE_CLAIM_SECONDS = 60;
const KEY = /^[\x21-\x7e][\x20-\x7e]{0,254}$/;

export type Claim = { kind: 'claimed' } | { kind: 'replay'; body: unknown };

/**
 * Idempotency-Key for POST /v1/events (contract §7). The first request claims the key; the
 * ledger stores its response in the same transaction as its event; later requests with the same
 * key and body replay that response, with a different body get 422, while in flight 409.
 */
@Injectable()
export class IdempotencyService {
  constructor(private readonly keys: IdempotencyKeysRepository) {}

  static validate(key: string): void {
    if (!KEY.test(key)) {
      throw AppError.validation([
        { field: 'Idempotency-Key', message: 'Idempotency-Key must be 1-255 printable ASCII characters' },
      ]);
    }
  }

  static digest(request: unknown): string {
    return sha256Hex(canonicalJson(request));
  }

  async claim(accountId: string, key: string, digest: string): Promise<Claim> {
    // Twice at most: a claim released between our insert and our read is simply claimed again.
    for (let attempt = 0; attempt < 2; attempt++) {
      if (await this.keys.claim(accountId, key, digest)) return { kind: 'claimed' };
      const row = await this.keys.find(accountId, key, STALE_CLAIM_SECONDS);
      if (!row) continue;
      if (row.requestDigest !== digest) {
        throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body.');
      }
      if (row.response !== null) return { kind: 'replay', body: JSON.parse(row.response) as unknown };
      if (row.stale && (await this.keys.takeOverStale(accountId, key, STALE_CLAIM_SECONDS))) return { kind: 'claimed' };
      throw new AppError(
        'IDEMPOTENCY_IN_PROGRESS',
        'A request with this Idempotency-Key is still being processed.',
        {},
        { 'Retry-After': '1' },
      );
    }
    throw new AppError(
      'IDEMPOTENCY_IN_PROGRESS',
      'A request with this Idempotency-Key is still being processed.',
      {},
      { 'Retry-After': '1' },
    );
  }

  /** After a failed append: nothing was written, so the client may retry with the same key. */
  async release(accountId: string, key: string): Promise<void> {
    await this.keys.release(accountId, key);
  }
}
