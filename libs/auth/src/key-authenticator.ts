import { Injectable, Logger } from '@nestjs/common';
import { API_KEY_TEXT } from '@app/common';
import { digestApiKey } from './api-key';
import { ApiKeyStore } from './api-key.store';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { AuthenticatedKey } from './authenticated-key';
import { KeyUsage } from './key-usage';

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

/** The key of an `Authorization: Bearer <key>` header; undefined for any other header or none. */
function bearerKey(authorization: string | undefined): string | undefined {
  return authorization === undefined ? undefined : BEARER.exec(authorization)?.[1];
}

/** Resolves a request's key from its Authorization header alone, cheaply for the ones that fail. */
@Injectable()
export class KeyAuthenticator {
  private readonly logger = new Logger('Auth');

  constructor(
    private readonly store: ApiKeyStore,
    private readonly limiter: AuthFailureLimiter,
    private readonly usage: KeyUsage,
  ) {}

  /**
   * Lookups under way, by digest, each with its one reservation: concurrent requests with one key
   * (a valid key whose cache entry just expired, under load) share its answer, so they neither
   * count as that many failures of the address nor query more than once. The one place lookups
   * are shared.
   */
  private readonly lookups = new Map<string, Promise<Authentication>>();

  /**
   * The header is parsed and its key digested once. A key found valid lately is answered at once,
   * synchronously (no promise, no query, the client's address not even worked out); otherwise a
   * promise. `address` is only asked for when the key is not cached (Express works it out from the
   * headers).
   */
  authenticate(authorization: string | undefined, address: () => string): Authentication | Promise<Authentication> {
    const presented = bearerKey(authorization);
    if (presented === undefined) return { outcome: 'missing' };
    const digest = digestApiKey(presented);
    const known = this.store.cached(digest);
    if (known) {
      this.usage.noteUse(known.keyId);
      return { outcome: 'authenticated', key: known };
    }
    const pending = this.lookups.get(digest);
    if (pending) return pending;
    const client = address();
    const retryAfterSeconds = this.limiter.admit(client);
    // Over the limit, a digest this instance knows as a key's is still looked up (it reserves
    // nothing): refused keys cannot lock a valid one out of an address, and bogus ones still cost
    // no query (issue 18, item 11).
    const reserved = retryAfterSeconds === null;
    if (!reserved && !this.store.mayBeValid(digest))
      return { outcome: 'throttled', retryAfterSeconds, limitPerMinute: this.limiter.limitPerMinute };
    const lookup = this.lookUp(API_KEY_TEXT.test(presented) ? digest : null, reserved ? client : null).finally(() =>
      this.lookups.delete(digest),
    );
    this.lookups.set(digest, lookup);
    return lookup;
  }

  /**
   * `digest` is null for what cannot be a key: refused without a query. `client` is the address
   * whose failure was reserved, given back when the key proves valid or cannot be checked (null:
   * nothing reserved).
   */
  private async lookUp(digest: string | null, client: string | null): Promise<Authentication> {
    let key: AuthenticatedKey | null;
    try {
      key = digest === null ? null : await this.store.lookUp(digest);
    } catch (error) {
      if (client !== null) this.limiter.forgive(client);
      this.logger.error(
        `API keys cannot be looked up, answering 503: ${error instanceof Error ? error.message : String(error)}`,
      );
      return { outcome: 'unavailable' };
    }
    if (!key) return { outcome: 'refused' };
    if (client !== null) this.limiter.forgive(client);
    this.usage.noteUse(key.keyId);
    return { outcome: 'authenticated', key };
  }
}
