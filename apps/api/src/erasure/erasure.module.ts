import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { ErasureController } from './erasure.controller';
import { ErasureNoticesModule } from './erasure-notices';
import { ErasureScrubber } from './erasure-scrubber';
import { ErasureService } from './erasure.service';

/** Erasure of personal fields of version-2 events (docs/contract.md §17). */
@Module({
  imports: [AuditModule, ErasureNoticesModule],
  controllers: [ErasureController],
  providers: [ErasureService, ErasureScrubber],
})
export class ErasureModule {}
