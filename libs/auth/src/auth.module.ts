import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { AppConfig } from '@app/common';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyStore } from './api-key.store';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { KeyAuthenticator } from './key-authenticator';
import { KeyBootstrapService } from './key-bootstrap.service';
import { RateLimitGuard } from './rate-limit.guard';

/**
 * Deny by default: the key guard, then the per-key rate limit, on every route. KeyAuthenticator
 * is what the HTTP edge's authenticateRequests middleware resolves keys with, before any body.
 */
@Module({
  imports: [
    ThrottlerModule.forRootAsync({
      inject: [AppConfig],
      useFactory: (config: AppConfig) => ({
        throttlers: [{ ttl: 1000, limit: Math.max(1, config.rateLimitPerSecond) }],
        skipIf: () => config.rateLimitPerSecond === 0,
        setHeaders: false,
      }),
    }),
  ],
  providers: [
    ApiKeyStore,
    AuthFailureLimiter,
    KeyAuthenticator,
    KeyBootstrapService,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
  ],
  exports: [KeyAuthenticator],
})
export class AuthModule {}
