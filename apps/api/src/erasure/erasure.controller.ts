import { Body, Controller, Get, HttpCode, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedKey, CallerKey, MANAGE, RequireScopes } from '@app/auth';
import { NoQueryDto } from '../common/no-query.dto';
import { ApiConflict, ApiDataOneOf, ApiErrors, ApiPage } from '../openapi/openapi-responses';
import { EraseDto } from './dto/erase.dto';
import { ErasureDryRunView, ErasureResultView, ErasureView, ListErasuresQuery } from './dto/erasure.view';
import { ErasureService } from './erasure.service';

/**
 * Erasure (docs/contract.md §17). Scopes: `admin` of the account or `operator` (who names `accountId`);
 * an account the key may not manage is a 404.
 */
@ApiTags('erasure')
@Controller('v1')
export class ErasureController {
  constructor(private readonly erasure: ErasureService) {}

  @Post('erasures')
  @HttpCode(200)
  @RequireScopes(MANAGE)
  @ApiOperation({
    summary:
      'Erase fields of every version-2 event that q matches: values and salts deleted, commitments kept, every hash and proof unchanged',
  })
  @ApiDataOneOf([ErasureResultView, ErasureDryRunView], 200, 'Erased (or, for dryRun, what would be)')
  @ApiConflict('matching events are under legal hold')
  @ApiErrors(404, 413, 415, 422)
  erase(@CallerKey() key: AuthenticatedKey, @Body() body: EraseDto, @Query() _query: NoQueryDto) {
    return this.erasure.erase(key, body);
  }

  @Get('erasures')
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'Past erasures of the account, newest first (never their queries)' })
  @ApiPage(ErasureView)
  @ApiErrors(404)
  list(@CallerKey() key: AuthenticatedKey, @Query() query: ListErasuresQuery) {
    return this.erasure.list(key, query);
  }
}
