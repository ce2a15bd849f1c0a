import { Controller, Get, Param, Query } from '@nestjs/common';
import { Account } from '@app/auth';
import { NoQueryDto } from '../common/no-query.dto';
import { ChainsService } from './chains.service';
import { ListChainsQuery } from './dto/list-chains.query';

/** Read-only: the default `read` scope. The status path is singular (spec §1). */
@Controller('v1')
export class ChainsController {
  constructor(private readonly chains: ChainsService) {}

  @Get('chains')
  list(@Account() account: string, @Query() query: ListChainsQuery) {
    return this.chains.list(account, query);
  }

  @Get('chain/:chainId/status')
  status(@Account() account: string, @Param('chainId') chainId: string, @Query() _query: NoQueryDto) {
    return this.chains.status(account, chainId);
  }
}
