import { Injectable, Logger } from '@nestjs/common';
import { ApiKeyStore } from './api-key.store';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { AuthenticatedKey } from './authenticated-key';

/** What became of a request's credentials; ApiKeyGuard turns all but the first into 401, 429 or 503. */
export type Authentication =
  | { outcome: 'authenticated'; key: AuthenticatedKey }
  /** No `Authorization: Bearer <key>` header. */
  | { outcome: 'missing' }
  /** An unknown, revoked or malformed key. */
  | { outcome: 'refused' }
  /** Too many refused keys from this address lately; not looked up. */
  | { outcome: 'throttled'; retryAfterSeconds: number; limitPerMinute: number }
  /** The key store could not be reached: the key may well be valid. */
  | { outcome: 'unavailable' };

/** RFC 6750 §2.1, and only that: keys in the query string or the body are never read. */
const BEARER = /^Bearer +(\S+)$/i;

/** Resolves a request's key from its Authorization header alone, cheaply for the ones that fail. */
@Injectable()
export class KeyAuthenticator {
  private readonly logger = new Logger('Auth');

  constructor(
    private readonly store: ApiKeyStore,
    private readonly limiter: AuthFailureLimiter,
  ) {}

  async authenticate(authorization: string | undefined, address: string): Promise<Authentication> {
    const presented = authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
    if (presented === undefined) return { outcome: 'missing' };
    const known = this.store.cached(presented);
    if (known) return { outcome: 'authenticated', key: known };
    const retryAfterSeconds = this.limiter.admit(address);
    if (retryAfterSeconds !== null)
      return { outcome: 'throttled', retryAfterSeconds, limitPerMinute: this.limiter.limitPerMinute };
    let key: AuthenticatedKey | null;
    try {
      key = await this.store.authenticate(presented);
    } catch (error) {
      this.limiter.forgive(address);
      this.logger.error(
        `API keys cannot be looked up, answering 503: ${error instanceof Error ? error.message : error}`,
      );
      return { outcome: 'unavailable' };
    }
    if (!key) return { outcome: 'refused' };
    this.limiter.forgive(address);
    return { outcome: 'authenticated', key };
  }
}
