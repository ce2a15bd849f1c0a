import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { READ, RequireScopes } from '@app/auth';
import { NoQueryDto } from '../common/no-query.dto';
import { ApiData, ApiErrors, ApiPage } from '../openapi/openapi-responses';
import { ChainsService } from './chains.service';
import { ChainView } from './dto/chain.view';
import { ListChainsQuery } from './dto/list-chains.query';
import { ReadAccount } from '../read-account/read-account.decorator';

/** Read-only: the default `read` scope. The status path is singular (docs/contract.md §4). */
@ApiTags('chains')
@Controller('v1')
export class ChainsController {
  constructor(private readonly chains: ChainsService) {}

  @Get('chains')
  @RequireScopes(READ)
  @ApiOperation({ summary: 'List the account’s chains' })
  @ApiPage(ChainView)
  @ApiErrors()
  list(@ReadAccount() account: string, @Query() query: ListChainsQuery) {
    return this.chains.list(account, query);
  }

  @Get('chain/:chainId/status')
  @RequireScopes(READ)
  @ApiOperation({ summary: 'One chain: its head and size' })
  @ApiData(ChainView)
  @ApiErrors(404)
  status(@ReadAccount() account: string, @Param('chainId') chainId: string, @Query() _query: NoQueryDto) {
    return this.chains.status(account, chainId);
  }
}
