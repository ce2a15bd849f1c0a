import { Module } from '@nestjs/common';
import { CheckpointSigner } from './checkpoint-signer';
import { CheckpointsController } from './checkpoints.controller';
import { CheckpointsService } from './checkpoints.service';

/** Signs and serves checkpoints; whole-chain verification (VerificationModule) uses its signer's keys, the retention sweep its service. */
@Module({
  controllers: [CheckpointsController],
  providers: [CheckpointSigner, CheckpointsService],
  exports: [CheckpointSigner, CheckpointsService],
})
export class CheckpointsModule {}
