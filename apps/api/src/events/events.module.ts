import { Module } from '@nestjs/common';
import { AppendQueue } from './append/append-queue';
import { ChainLedger } from './append/chain-ledger';
import { ChainTrees } from './append/chain-trees';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';
import { IdempotencySweeper } from './idempotency-sweeper';
import { IdempotencyService } from './idempotency.service';

@Module({
  controllers: [EventsController],
  providers: [EventsService, AppendQueue, ChainLedger, ChainTrees, IdempotencyService, IdempotencySweeper],
  exports: [ChainLedger],
})
export class EventsModule {}
