import { Controller, Get, Query } from '@nestjs/common';
import { ApiExtraModels, ApiOperation, ApiResponse, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { AuthenticatedKey, CallerKey, READ, RequireScopes } from '@app/auth';
import { EXPORT_LIMIT, RequestId } from '@app/common';
import { ExportDocumentView } from './dto/export-document.view';
import { ExportQueryDto } from './dto/export-query.dto';
import { ExportService } from './export.service';
import { BoundedRead } from '../reads/bounded-read.decorator';
import { ReadAccount } from '../read-account/read-account.decorator';

/** Not taken for GET /v1/events/:id, whatever the module order: `:id` matches event ids only (app.setup.ts). */
@ApiTags('export')
@Controller('v1/events/export')
export class ExportController {
  constructor(private readonly exports: ExportService) {}

  @Get()
  @RequireScopes(READ)
  @ApiOperation({
    summary: 'Download the events of a period as JSON or CSV (RFC 4180, header row)',
    description:
      `At most ${EXPORT_LIMIT.toLocaleString('en-US')} events (422 EXPORT_LIMIT_EXCEEDED before any byte otherwise). ` +
      'An account runs at most EXPORTS_PER_ACCOUNT exports at once, the service EXPORTS_PER_INSTANCE (429 beyond); ' +
      'each counts as one of the account’s READS_PER_ACCOUNT reads until its file is sent. Each statement runs under ' +
      'QUERY_TIMEOUT_SECONDS: past it the count is a 422 QUERY_TOO_EXPENSIVE, a later fetch cuts the file. ' +
      'A client that takes no byte for EXPORT_STALL_TIMEOUT_SECONDS is cut, leaving the file unfinished.',
  })
  @ApiExtraModels(ExportDocumentView)
  @ApiResponse({
    status: 200,
    description: 'An attachment in the requested format; errors are JSON whatever the format',
    headers: {
      'Content-Disposition': {
        description: 'attachment; filename="audit-export-<after>-<before>.<csv|json>", times as UTC YYYYMMDDTHHMMSSZ',
        required: true,
        schema: {
          type: 'string',
          pattern: '^attachment; filename="audit-export-\\d{8}T\\d{6}Z-\\d{8}T\\d{6}Z\\.(csv|json)"$',
        },
      },
    },
    content: {
      'application/json': { schema: { $ref: getSchemaPath(ExportDocumentView) } },
      'text/csv': {
        schema: {
          type: 'string',
          description:
            'RFC 4180 (UTF-8, CRLF, no BOM), header row id,timestamp,actor,action,resource,chain_id,chain_name,' +
            "chain_position,hash,previous_hash,context; cells starting with = + - @ tab or CR are prefixed with '",
        },
      },
    },
  })
  @BoundedRead(
    'EXPORT_LIMIT_EXCEEDED: more than the limit of events match; ',
    ', or as many exports as EXPORTS_PER_ACCOUNT (the account) or EXPORTS_PER_INSTANCE (the service) allow',
  )
  export(
    @CallerKey() key: AuthenticatedKey,
    @ReadAccount() account: string,
    @Query() query: ExportQueryDto,
    @RequestId() requestId?: string,
  ) {
    return this.exports.export(account, query, key.keyId, requestId);
  }
}
