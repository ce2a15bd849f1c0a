import { Module } from '@nestjs/common';
import { ThrottlerModule } from '@nestjs/throttler';
import { AppConfig } from '@app/common';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyStore } from './api-key.store';
import { ApiKeyStrategy } from './api-key.strategy';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { KeyAuthenticator } from './key-authenticator';
import { KeyBootstrapService } from './key-bootstrap.service';
import { KeyUsage } from './key-usage';
import { RateLimitGuard } from './rate-limit.guard';
import { RateLimitStorage } from './rate-limit.storage';

/**
 * The key guard (@nestjs/passport over ApiKeyStrategy, which asks KeyAuthenticator) and the per-key
 * rate limit. The app runs them on every route, in that order and before any body is read, from
 * its one global guard (apps/api/src/common/request-guards.ts): deny by default.
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        throttlers: [{ ttl: 1000, limit: Math.max(1, config.rateLimitPerSecond) }],
        skipIf: () => config.rateLimitPerSecond === 0,
        setHeaders: false,
        storage: new RateLimitStorage(),
      }),
    }),
  ],
  providers: [
    ApiKeyStore,
    ApiKeyStrategy,
    AuthFailureLimiter,
    KeyAuthenticator,
    KeyBootstrapService,
    KeyUsage,
    ApiKeyGuard,
    RateLimitGuard,
  ],
  exports: [ApiKeyGuard, RateLimitGuard, ApiKeyStore],
})
export class AuthModule {}
