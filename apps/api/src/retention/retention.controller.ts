import { Body, Controller, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedKey, CallerKey, MANAGE, OPERATOR, RequireScopes } from '@app/auth';
import { NoQueryDto } from '../common/no-query.dto';
import { ChainView } from '../chains/dto/chain.view';
import { ApiData, ApiErrors } from '../openapi/openapi-responses';
import { AccountView } from '../accounts/dto/account.view';
import { LegalHoldDto, RetentionDto } from './dto/retention-settings.dto';
import { SweepResultView } from './dto/sweep-result.view';
import { RetentionService } from './retention.service';
import { RetentionSweeper } from './retention-sweeper';

/**
 * Retention and legal hold (docs/contract.md §14). Scopes (@RequireScopes on each handler): the settings
 * `admin` or `operator`, the sweep `operator` (it sweeps every account).
 */
@ApiTags('retention')
@Controller('v1')
export class RetentionController {
  constructor(
    private readonly retention: RetentionService,
    private readonly sweeper: RetentionSweeper,
  ) {}

  @Put('chain/:chainId/retention')
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'Set a chain’s retention in days (null: follow the account)' })
  @ApiData(ChainView, 200, 'The chain’s status with the new setting')
  @ApiErrors(404, 415)
  setChainRetention(
    @CallerKey() key: AuthenticatedKey,
    @Param('chainId') chainId: string,
    @Body() dto: RetentionDto,
    @Query() _q: NoQueryDto,
  ) {
    return this.retention.setChainRetention(key, chainId, dto);
  }

  @Put('chain/:chainId/legal-hold')
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'Put a chain on legal hold, or lift its hold' })
  @ApiData(ChainView, 200, 'The chain’s status with the new setting')
  @ApiErrors(404, 415)
  setChainLegalHold(
    @CallerKey() key: AuthenticatedKey,
    @Param('chainId') chainId: string,
    @Body() dto: LegalHoldDto,
    @Query() _q: NoQueryDto,
  ) {
    return this.retention.setChainLegalHold(key, chainId, dto);
  }

  @Put('accounts/:accountId/retention')
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'Set the account’s default retention in days (null: forever)' })
  @ApiData(AccountView, 200, 'The account with the new setting')
  @ApiErrors(404, 415)
  setAccountRetention(
    @CallerKey() key: AuthenticatedKey,
    @Param('accountId') accountId: string,
    @Body() dto: RetentionDto,
    @Query() _q: NoQueryDto,
  ) {
    return this.retention.setAccountRetention(key, accountId, dto);
  }

  @Put('accounts/:accountId/legal-hold')
  @RequireScopes(MANAGE)
  @ApiOperation({ summary: 'Put the account on legal hold, or lift its hold' })
  @ApiData(AccountView, 200, 'The account with the new setting')
  @ApiErrors(404, 415)
  setAccountLegalHold(
    @CallerKey() key: AuthenticatedKey,
    @Param('accountId') accountId: string,
    @Body() dto: LegalHoldDto,
    @Query() _q: NoQueryDto,
  ) {
    return this.retention.setAccountLegalHold(key, accountId, dto);
  }

  @Post('retention/sweep')
  @RequireScopes(OPERATOR)
  @HttpCode(200)
  @ApiOperation({
    summary: 'Run a retention sweep now',
    description:
      'Prunes every chain not on hold whose oldest events are older than its retention, as the periodic sweep does; answers the numbers pruned.',
  })
  @ApiData(SweepResultView)
  sweep(@Query() _q: NoQueryDto) {
    return this.sweeper.sweepAll();
  }
}
