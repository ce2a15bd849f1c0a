import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventEntity } from '@app/database';
import { AppendQueue } from './append/append-queue';
import { ChainLedger } from './append/chain-ledger';
import { EventsController } from './events.controller';
import { EventsService } from './events.service';
import { IdempotencySweeper } from './idempotency-sweeper';
import { IdempotencyService } from './idempotency.service';

@Module({
  imports: [TypeOrmModule.forFeature([EventEntity])],
  controllers: [EventsController],
  providers: [EventsService, AppendQueue, ChainLedger, IdempotencyService, IdempotencySweeper],
})
export class EventsModule {}
