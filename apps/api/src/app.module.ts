import { Module } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import { AuthModule } from '@app/auth';
import { AppConfigModule, createValidationPipe, GlobalExceptionFilter } from '@app/common';
import { DatabaseModule } from '@app/database';
import { AccountsModule } from './accounts/accounts.module';
import { ChainsModule } from './chains/chains.module';
import { CheckpointsModule } from './checkpoints/checkpoints.module';
import { ConsoleModule } from './console/console.module';
import { JsonBodyGuard } from './common/json-body';
import { RequestGuards } from './common/request-guards';
import { EventsModule } from './events/events.module';
import { ExportModule } from './export/export.module';
import { HealthModule } from './health/health.module';
import { ObservabilityModule } from './observability/observability.module';
import { KeysModule } from './keys/keys.module';
import { ProofsModule } from './proofs/proofs.module';
import { ReadAccountModule } from './read-account/read-account.module';
import { ReadsModule } from './reads/reads.module';
import { ErasureModule } from './erasure/erasure.module';
import { RetentionModule } from './retention/retention.module';
import { SchemasModule } from './schemas/schemas.module';
import { StatsModule } from './stats/stats.module';
import { DestinationsModule } from './streams/destinations/destinations.module';
import { VerificationModule } from './verification/verification.module';
import { WitnessingModule } from './witnessing/witnessing.module';

@Module({
  imports: [
    AppConfigModule,
    ObservabilityModule,
    DatabaseModule,
    AuthModule,
    HealthModule,
    ExportModule,
    VerificationModule,
    EventsModule,
    ChainsModule,
    CheckpointsModule,
    ProofsModule,
    StatsModule,
    AccountsModule,
    KeysModule,
    ConsoleModule,
    RetentionModule,
    ErasureModule,
    SchemasModule,
    ReadsModule,
    ReadAccountModule,
    DestinationsModule,
    WitnessingModule,
  ],
  providers: [
    JsonBodyGuard,
    { provide: APP_GUARD, useClass: RequestGuards },
    { provide: APP_FILTER, useClass: GlobalExceptionFilter },
    { provide: APP_PIPE, useFactory: createValidationPipe },
  ],
})
export class AppModule {}
