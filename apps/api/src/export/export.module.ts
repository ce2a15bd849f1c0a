import { Module } from '@nestjs/common';
import { AuditModule } from '../audit/audit.module';
import { ReadsModule } from '../reads/reads.module';
import { ExportController } from './export.controller';
import { ExportService } from './export.service';
import { ExportSlots } from './export-slots';

@Module({
  imports: [AuditModule, ReadsModule],
  controllers: [ExportController],
  providers: [ExportService, ExportSlots],
  exports: [ExportSlots],
})
export class ExportModule {}
