import { Module } from '@nestjs/common';
import { CheckpointsModule } from '../checkpoints/checkpoints.module';
import { CheckpointLogService } from './checkpoint-log.service';
import { WitnessList } from './witness-list';
import { WitnessingController } from './witnessing.controller';
import { WitnessingReadsService } from './witnessing-reads.service';
import { WitnessingService } from './witnessing.service';

/** The checkpoint log, its signing, the witness client and the reads (docs/contract.md §18). */
@Module({
  imports: [CheckpointsModule],
  controllers: [WitnessingController],
  providers: [WitnessList, CheckpointLogService, WitnessingService, WitnessingReadsService],
  exports: [WitnessingService],
})
export class WitnessingModule {}
