import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ChainEntity, EventEntity } from '@app/database';
import { ChainReader } from './chain-reader';
import { ChainVerificationService } from './chain-verification.service';
import { CheckpointSigner } from './checkpoint-signer';
import { CheckpointsController } from './checkpoints.controller';
import { CheckpointsService } from './checkpoints.service';
import { WindowInspector } from './window-inspector';

@Module({
  imports: [TypeOrmModule.forFeature([ChainEntity, EventEntity])],
  controllers: [CheckpointsController],
  providers: [CheckpointSigner, CheckpointsService, ChainVerificationService, ChainReader, WindowInspector],
})
export class CheckpointsModule {}
