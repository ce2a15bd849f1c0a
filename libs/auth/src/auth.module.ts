import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { PassportModule } from '@nestjs/passport';
import { ThrottlerModule } from '@nestjs/throttler';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AppConfig } from '@app/common';
import { ApiKeyEntity } from '@app/database';
import { ApiKeyGuard } from './api-key.guard';
import { ApiKeyStore } from './api-key.store';
import { ApiKeyStrategy } from './api-key.strategy';
import { KeyBootstrapService } from './key-bootstrap.service';
import { RateLimitGuard } from './rate-limit.guard';

/** Deny by default: the key guard, then the per-key rate limit, on every route. */
@Module({
  imports: [
    PassportModule,
    TypeOrmModule.forFeature([ApiKeyEntity]),
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
    KeyBootstrapService,
    { provide: APP_GUARD, useClass: ApiKeyGuard },
    { provide: APP_GUARD, useClass: RateLimitGuard },
  ],
})
export class AuthModule {}
