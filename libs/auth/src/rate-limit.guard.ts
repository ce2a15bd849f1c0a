import { ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ThrottlerGuard, ThrottlerLimitDetail } from '@nestjs/throttler';
import { AppError, Metrics } from '@app/common';
import type { AuthenticatedKey } from './authenticated-key';

/**
 * Per-key request rate (RATE_LIMIT_PER_SECOND), counted across all routes of the key.
 * Runs after ApiKeyGuard, so the tracker is the key id; public routes fall back to the IP.
 */
@Injectable()
export class RateLimitGuard extends ThrottlerGuard {
  // A property: ThrottlerGuard's constructor is its own, with its own injections.
  @Inject(Metrics) private readonly metrics!: Metrics;

  protected override getTracker(req: { user?: AuthenticatedKey; ip?: string }): Promise<string> {
    return Promise.resolve(req.user ? `key:${req.user.keyId}` : `ip:${req.ip ?? 'unknown'}`);
  }

  protected override generateKey(_context: ExecutionContext, tracker: string): string {
    return tracker;
  }

  /** Throws (ThrottlerGuard awaits it inside its own async handleRequest, so the request is refused the same way). */
  protected override throwThrottlingException(_context: ExecutionContext, detail: ThrottlerLimitDetail): Promise<void> {
    this.metrics.requestRateLimited();
    throw new AppError(
      'RATE_LIMITED',
      `Too many requests: this key may make ${detail.limit} requests per second.`,
      { limitPerSecond: detail.limit },
      { 'Retry-After': String(Math.max(1, detail.timeToBlockExpire)) },
    );
  }
}
