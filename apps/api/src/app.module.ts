import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { AuthModule } from '@app/auth';
import { AppConfigModule, createValidationPipe, GlobalExceptionFilter } from '@app/common';
import { DatabaseModule } from '@app/database';
import { EventsModule } from './events/events.module';
import { HealthModule } from './health/health.module';

/** Feature modules with literal paths (export, verification) come before EventsModule's /:id. */
@Module({
  imports: [AppConfigModule, DatabaseModule, AuthModule, HealthModule, EventsModule],
  providers: [
    { provide: APP_FILTER, useClass: GlobalExceptionFilter },
    { provide: APP_PIPE, useFactory: createValidationPipe },
  ],
})
export class AppModule {}
