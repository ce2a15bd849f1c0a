import { Body, Controller, Delete, Get, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { AuthenticatedKey, CallerKey, MANAGE, RequireScopes } from '@app/auth';
import { NoQueryDto } from '../common/no-query.dto';
import { BodyLimit } from '../common/json-body';
import { ApiBoundedRead, ApiData, ApiDataList, ApiErrors } from '../openapi/openapi-responses';
import { PreviewQuery } from './dto/preview.query';
import { PreviewSchemaDto, PutSchemaDto } from './dto/put-schema.dto';
import { SchemaPreviewView, SchemaView, SchemaWithVersionsView } from './dto/schema.view';
import { SCHEMA_BODY_BYTES } from './schema-compiler';
import { SchemasService } from './schemas.service';

const ACTION = ApiParam({
  name: 'action',
  description: 'An action name, or a prefix ending in .* (invoice.*): the longest matching pattern applies to an event',
  example: 'invoice.approve',
});

/**
 * Action schemas (docs/contract.md §19). Scopes (@RequireScopes on each handler): `admin` for its own
 * account, `operator` for any; tenancy and everything else: SchemasService.
 */
@ApiTags('schemas')
@Controller('v1/accounts/:accountId/schemas')
export class SchemasController {
  constructor(private readonly schemas: SchemasService) {}

  @Get()
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'Each action’s latest schema version (deletions included), oldest action first' })
  @ApiDataList(SchemaView)
  @ApiErrors(404)
  list(@CallerKey() key: AuthenticatedKey, @Param('accountId') accountId: string, @Query() _q: NoQueryDto) {
    return this.schemas.list(key, accountId);
  }

  @Put(':action')
  @RequireScopes(MANAGE)
  @HttpCode(201)
  @BodyLimit(SCHEMA_BODY_BYTES)
  @ApiOperation({
    summary: 'Save the next version of an action’s schema',
    description:
      'Makes version n+1 (1 for a new action). From its 201 on, every append of a matching event (single, batch) is checked against it, on every instance. Recorded in the account’s _audit chain (schema.changed).',
  })
  @ACTION
  @ApiData(SchemaView, 201, 'Created')
  @ApiErrors(404, 413, 415)
  put(
    @CallerKey() key: AuthenticatedKey,
    @Param('accountId') accountId: string,
    @Param('action') action: string,
    @Body() dto: PutSchemaDto,
    @Query() _q: NoQueryDto,
  ) {
    return this.schemas.put(key, accountId, action, dto);
  }

  @Get(':action')
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'An action’s latest schema version with every version' })
  @ACTION
  @ApiData(SchemaWithVersionsView)
  @ApiErrors(404)
  get(
    @CallerKey() key: AuthenticatedKey,
    @Param('accountId') accountId: string,
    @Param('action') action: string,
    @Query() _q: NoQueryDto,
  ) {
    return this.schemas.get(key, accountId, action);
  }

  @Delete(':action')
  @RequireScopes(MANAGE)
  @ApiOperation({
    summary: 'Delete an action’s schema: adds a version whose schema is null (nothing is removed)',
    description: 'Appends of the action are then unchecked. 404 when it has no schema. Recorded in _audit.',
  })
  @ACTION
  @ApiData(SchemaView, 200, 'The deletion’s version')
  @ApiErrors(404)
  remove(
    @CallerKey() key: AuthenticatedKey,
    @Param('accountId') accountId: string,
    @Param('action') action: string,
    @Query() _q: NoQueryDto,
  ) {
    return this.schemas.remove(key, accountId, action);
  }

  @Get(':action/versions/:n')
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'One version of an action’s schema' })
  @ACTION
  @ApiParam({ name: 'n', description: 'The version number, from 1', example: '1' })
  @ApiData(SchemaView)
  @ApiErrors(404)
  version(
    @CallerKey() key: AuthenticatedKey,
    @Param('accountId') accountId: string,
    @Param('action') action: string,
    @Param('n') n: string,
    @Query() _q: NoQueryDto,
  ) {
    return this.schemas.version(key, accountId, action, n);
  }

  @Post(':action/preview')
  @RequireScopes(MANAGE)
  @HttpCode(200)
  @BodyLimit(SCHEMA_BODY_BYTES)
  @ApiOperation({
    summary: 'What a candidate schema would refuse among the action’s latest events (nothing stored)',
    description:
      'Checks the latest `limit` events whose action the pattern matches, newest first; answers how many it would refuse under enforce, with the first ten.',
  })
  @ACTION
  @ApiData(SchemaPreviewView)
  @ApiErrors(404, 413, 415)
  @ApiBoundedRead()
  preview(
    @CallerKey() key: AuthenticatedKey,
    @Param('accountId') accountId: string,
    @Param('action') action: string,
    @Body() dto: PreviewSchemaDto,
    @Query() query: PreviewQuery,
  ) {
    return this.schemas.preview(key, accountId, action, dto, query);
  }
}
