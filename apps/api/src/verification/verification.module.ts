import { Module } from '@nestjs/common';
import { CheckpointsModule } from '../checkpoints/checkpoints.module';
import { ChainVerificationService } from './chain-verification.service';
import { EventVerificationService } from './event-verification.service';
import { VerificationController } from './verification.controller';
import { WindowInspector } from './window-inspector';

/** Verification of one event and of whole chains; the checks themselves are libs/verification's. */
@Module({
  imports: [CheckpointsModule],
  controllers: [VerificationController],
  providers: [EventVerificationService, ChainVerificationService, WindowInspector],
})
export class VerificationModule {}
