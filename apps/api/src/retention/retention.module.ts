import { Module } from '@nestjs/common';
import { CheckpointsModule } from '../checkpoints/checkpoints.module';
import { RetentionAudit } from './retention-audit';
import { RetentionController } from './retention.controller';
import { RetentionService } from './retention.service';
import { RetentionSweeper } from './retention-sweeper';

/** Retention settings, legal hold and the sweep that prunes (contract §14). */
@Module({
  imports: [CheckpointsModule],
  controllers: [RetentionController],
  providers: [RetentionService, RetentionSweeper, RetentionAudit],
})
export class RetentionModule {}
