import { Module } from '@nestjs/common';
import { LifecycleModule } from '../lifecycle/lifecycle.module';
import { ReadsModule } from '../reads/reads.module';
import { AppendQueue } from './append/append-queue';
import { ChainLedger } from './append/chain-ledger';
import { ChainTrees } from './append/chain-trees';
import { IdempotentLedger } from './append/idempotent-ledger';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';
import { IdempotencySweeper } from './idempotency-sweeper';
import { IdempotencyService } from './idempotency.service';
import { EventStreamService } from './stream/event-stream.service';
import { SchemaGate } from '../schemas/schema-gate';

@Module({
  imports: [LifecycleModule, ReadsModule],
  controllers: [EventsController],
  providers: [
    EventsService,
    AppendQueue,
    ChainLedger,
    IdempotentLedger,
    ChainTrees,
    IdempotencyService,
    IdempotencySweeper,
    EventStreamService,
    SchemaGate,
  ],
  exports: [ChainLedger, SchemaGate],
})
export class EventsModule {}
