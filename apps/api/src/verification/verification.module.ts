import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { EventEntity } from '@app/database';
import { VerificationController } from './verification.controller';
import { VerificationService } from './verification.service';

@Module({
  imports: [TypeOrmModule.forFeature([EventEntity])],
  controllers: [VerificationController],
  providers: [VerificationService],
})
export class VerificationModule {}
