import { Body, Controller, HttpCode, Param, Post, Put, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { AuthenticatedKey, CurrentKey, RequireScope } from '@app/auth';
import { NoQueryDto } from '../common/no-query.dto';
import { ChainView } from '../chains/dto/chain.view';
import { ApiData, ApiErrors } from '../openapi/openapi-responses';
import { AccountSettingsView } from './dto/account-settings.view';
import { LegalHoldDto, RetentionDto } from './dto/retention-settings.dto';
import { SweepResultView } from './dto/sweep-result.view';
import { RetentionService } from './retention.service';
import { RetentionSweeper } from './retention-sweeper';

/**
 * Retention and legal hold (contract §14). MERGE with branch `accounts`: its ROUTE_SCOPES table
 * gets `PUT /v1/chain/:chainId/retention`, `PUT /v1/chain/:chainId/legal-hold`,
 * `PUT /v1/accounts/:accountId/retention`, `PUT /v1/accounts/:accountId/legal-hold` as MANAGE
 * (admin, operator) and `POST /v1/retention/sweep` as OPERATOR, replacing the `@RequireScope`s
 * below. Until then (main has `ingest` and `read` only) they ask `ingest`, the scope that writes to
 * the account, and act on the key's own account only (RetentionService.accountOf; the sweep too).
 */
@ApiTags('retention')
@Controller('v1')
export class RetentionController {
  constructor(
    private readonly retention: RetentionService,
    private readonly sweeper: RetentionSweeper,
  ) {}

  @Put('chain/:chainId/retention')
  @RequireScope('ingest')
  @ApiOperation({ summary: 'Set a chain’s retention in days (null: follow the account)' })
  @ApiData(ChainView, 200, 'The chain’s status with the new setting')
  @ApiErrors(404, 415)
  setChainRetention(
    @CurrentKey() key: AuthenticatedKey,
    @Param('chainId') chainId: string,
    @Body() dto: RetentionDto,
    @Query() _q: NoQueryDto,
  ) {
    return this.retention.setChainRetention(key, chainId, dto);
  }

  @Put('chain/:chainId/legal-hold')
  @RequireScope('ingest')
  @ApiOperation({ summary: 'Put a chain on legal hold, or lift its hold' })
  @ApiData(ChainView, 200, 'The chain’s status with the new setting')
  @ApiErrors(404, 415)
  setChainLegalHold(
    @CurrentKey() key: AuthenticatedKey,
    @Param('chainId') chainId: string,
    @Body() dto: LegalHoldDto,
    @Query() _q: NoQueryDto,
  ) {
    return this.retention.setChainLegalHold(key, chainId, dto);
  }

  @Put('accounts/:accountId/retention')
  @RequireScope('ingest')
  @ApiOperation({ summary: 'Set the account’s default retention in days (null: forever)' })
  @ApiData(AccountSettingsView, 200, 'The account with the new setting')
  @ApiErrors(404, 415)
  setAccountRetention(
    @CurrentKey() key: AuthenticatedKey,
    @Param('accountId') accountId: string,
    @Body() dto: RetentionDto,
    @Query() _q: NoQueryDto,
  ) {
    return this.retention.setAccountRetention(key, accountId, dto);
  }

  @Put('accounts/:accountId/legal-hold')
  @RequireScope('ingest')
  @ApiOperation({ summary: 'Put the account on legal hold, or lift its hold' })
  @ApiData(AccountSettingsView, 200, 'The account with the new setting')
  @ApiErrors(404, 415)
  setAccountLegalHold(
    @CurrentKey() key: AuthenticatedKey,
    @Param('accountId') accountId: string,
    @Body() dto: LegalHoldDto,
    @Query() _q: NoQueryDto,
  ) {
    return this.retention.setAccountLegalHold(key, accountId, dto);
  }

  @Post('retention/sweep')
  @HttpCode(200)
  @RequireScope('ingest')
  @ApiOperation({
    summary: 'Run a retention sweep now',
    description:
      'Prunes every chain not on hold whose oldest events are older than its retention, as the periodic sweep does; answers the numbers pruned.',
  })
  @ApiData(SweepResultView)
  sweep(@CurrentKey() key: AuthenticatedKey, @Query() _q: NoQueryDto) {
    return this.sweeper.sweep(key.accountId).then((data) => ({ data }));
  }
}
