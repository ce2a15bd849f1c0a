import { Controller, Get, Query } from '@nestjs/common';
import { Account } from '@app/auth';
import { ExportQueryDto } from './dto/export-query.dto';
import { ExportService } from './export.service';

/** Registered before EventsModule, so this literal path wins over /v1/events/:id. */
@Controller('v1/events/export')
export class ExportController {
  constructor(private readonly exports: ExportService) {}

  @Get()
  export(@Account() account: string, @Query() query: ExportQueryDto) {
    return this.exports.export(account, query);
  }
}
