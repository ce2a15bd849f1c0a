import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { AppConfig } from '@app/common';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyStore } from './api-key.store';
import { ApiKeyStrategy } from './api-key.strategy';
import { AuthFailureLimiter } from './auth-failure-limiter';
import { KeyAuthenticator } from './key-authenticator';
import { KeyBootstrapService } from './key-bootstrap.service';
import { RateLimitGuard } from './rate-limit.guard';

/**
 * Deny by default: the key guard (@nestjs/passport over ApiKeyStrategy, which asks
 * KeyAuthenticator), then the per-key rate limit, on every route, before any body is read.
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
    ApiKeyStrategy,
    AuthFailureLimiter,
    KeyAuthenticator,
    KeyBootstrapService,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
  ],
})
export class AuthModule {}
