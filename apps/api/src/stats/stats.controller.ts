import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { READ, RequireScopes } from '@app/auth';
import { StatsQueryDto } from './dto/stats-query.dto';
import { StatsView } from './dto/stats.view';
import { StatsService } from './stats.service';
import { BoundedRead } from '../reads/bounded-read.decorator';
import { ReadAccount } from '../read-account/read-account.decorator';

/** Counts for the dashboard's charts (docs/contract.md §13): the `read` scope. */
@ApiTags('stats')
@Controller('v1/stats')
export class StatsController {
  constructor(private readonly stats: StatsService) {}

  @Get('events')
  @RequireScopes(READ)
  @ApiOperation({ summary: 'Count the account’s events by action, actor, resource, chain, hour or day' })
  @ApiOkResponse({ type: StatsView })
  @BoundedRead()
  events(@ReadAccount() account: string, @Query() query: StatsQueryDto): Promise<StatsView> {
    return this.stats.countEvents(account, query);
  }
}
