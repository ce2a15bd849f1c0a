import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { READ, RequireScopes } from '@app/auth';
import { ClientGone } from '../common/client-gone.decorator';
import { NoQueryDto } from '../common/no-query.dto';
import { ApiData, ApiErrors } from '../openapi/openapi-responses';
import { ChainVerificationService } from './chain-verification.service';
import { ChainVerificationView } from './dto/chain-verification.view';
import { VerificationResultView } from './dto/verification-result.view';
import { EventVerificationService } from './event-verification.service';
import { ReadAccount } from '../read-account/read-account.decorator';

/** Read-only: the default `read` scope. */
@ApiTags('verification')
@Controller('v1')
export class VerificationController {
  constructor(
    private readonly events: EventVerificationService,
    private readonly chains: ChainVerificationService,
  ) {}

  @Get('events/:id/verify')
  @RequireScopes(READ)
  @ApiOperation({ summary: 'Recompute one event’s hash and check its link and time order to the previous event' })
  @ApiData(VerificationResultView)
  @ApiErrors(404)
  verify(@ReadAccount() account: string, @Param('id') id: string, @Query() _query: NoQueryDto) {
    return this.events.verify(account, id);
  }

  @Get('chain/:chainId/verify')
  @RequireScopes(READ)
  @ApiOperation({
    summary: 'Walk the whole chain: every hash, every link, the time order, every stored checkpoint',
  })
  @ApiData(ChainVerificationView)
  @ApiErrors(404)
  verifyChain(
    @ReadAccount() account: string,
    @Param('chainId') chainId: string,
    @Query() _query: NoQueryDto,
    @ClientGone() clientGone: AbortSignal,
  ) {
    return this.chains.verify(account, chainId, clientGone);
  }
}
