import { Controller, Get, Query } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiExtraModels,
  ApiOperation,
  ApiProduces,
  ApiResponse,
  ApiTags,
  getSchemaPath,
} from '@nestjs/swagger';
import { Account } from '@app/auth';
import { EventView } from '../events/dto/event.view';
import { ApiErrors } from '../openapi/openapi-responses';
import { ExportQueryDto } from './dto/export-query.dto';
import { ExportService } from './export.service';

/** Not taken for GET /v1/events/:id, whatever the module order: `:id` matches event ids only (app.setup.ts). */
@ApiTags('export')
@ApiBearerAuth()
@Controller('v1/events/export')
export class ExportController {
  constructor(private readonly exports: ExportService) {}

  @Get()
  @ApiOperation({
    summary: 'Download the events of a period as JSON or CSV (RFC 4180, header row)',
    description: 'At most 10,000 events (422 EXPORT_LIMIT_EXCEEDED before any byte otherwise).',
  })
  @ApiProduces('application/json', 'text/csv')
  @ApiExtraModels(EventView)
  @ApiResponse({
    status: 200,
    description: 'An attachment; for json: { export, data }',
    schema: {
      type: 'object',
      properties: {
        export: {
          type: 'object',
          description:
            'format, generatedAt, period { after, before }, filters { actor, action, resource, chain_id }, count',
        },
        data: {
          type: 'array',
          description: 'The events, oldest first, each as in GET /v1/events without createdAt',
          items: { $ref: getSchemaPath(EventView) },
        },
      },
    },
  })
  @ApiErrors(422)
  export(@Account() account: string, @Query() query: ExportQueryDto) {
    return this.exports.export(account, query);
  }
}
