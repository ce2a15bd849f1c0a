import { Module } from '@nestjs/common';
import { ExportController } from './export.controller';
import { ExportService } from './export.service';
import { ExportSlots } from './export-slots';

@Module({
  controllers: [ExportController],
  providers: [ExportService, ExportSlots],
  exports: [ExportSlots],
})
export class ExportModule {}
