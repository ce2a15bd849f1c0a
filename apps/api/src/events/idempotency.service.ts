import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppError, IDEMPOTENCY_KEY } from '@app/common';
import { canonicalJson, sha256Hex } from '@app/hashing';

/** A claim older than this whose append never committed belongs to a request that died. */
const STALE_CLAIM_SECONDS = 60;

export type Claim = { kind: 'claimed' } | { kind: 'replay'; body: unknown };

/**
 * Idempotency-Key for POST /v1/events (contract §7). The first request claims the key; the
 * ledger stores its response in the same transaction as its event; later requests with the same
 * key and body replay that response, with a different body get 422, while in flight 409.
 */
@Injectable()
export class IdempotencyService {
  constructor(private readonly dataSource: DataSource) {}

  static validate(key: string): void {
    if (!IDEMPOTENCY_KEY.test(key)) {
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
      const inserted = (await this.dataSource.query(
        `INSERT INTO idempotency_keys (account_id, key, request_digest) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING 1`,
        [accountId, key, digest],
      )) as unknown[];
      if (inserted.length > 0) return { kind: 'claimed' };
      const [row] = (await this.dataSource.query(
        `SELECT request_digest, response, claimed_at < now() - make_interval(secs => $3) AS stale
           FROM idempotency_keys WHERE account_id = $1 AND key = $2`,
        [accountId, key, STALE_CLAIM_SECONDS],
      )) as { request_digest: string; response: string | null; stale: boolean }[];
      if (!row) continue;
      if (row.request_digest !== digest) {
        throw new AppError('IDEMPOTENCY_KEY_REUSED', 'This Idempotency-Key was used with a different request body.');
      }
      if (row.response !== null) return { kind: 'replay', body: JSON.parse(row.response) as unknown };
      if (row.stale && (await this.takeOver(accountId, key))) return { kind: 'claimed' };
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
    await this.dataSource.query(
      `DELETE FROM idempotency_keys WHERE account_id = $1 AND key = $2 AND response IS NULL`,
      [accountId, key],
    );
  }

  private async takeOver(accountId: string, key: string): Promise<boolean> {
    // TypeORM answers an UPDATE with [rows, affected].
    const [taken] = (await this.dataSource.query(
      `UPDATE idempotency_keys SET claimed_at = now()
        WHERE account_id = $1 AND key = $2 AND response IS NULL AND claimed_at < now() - make_interval(secs => $3)
       RETURNING 1`,
      [accountId, key, STALE_CLAIM_SECONDS],
    )) as [unknown[], number];
    return taken.length > 0;
  }
}
