import { Controller, Get, Param, Query, UseInterceptors } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { READ, RequireScopes } from '@app/auth';
import { NoQueryDto } from '../common/no-query.dto';
import { PlainTextInterceptor } from '../checkpoints/plain-text.interceptor';
import { ApiData, ApiDataList, ApiErrors, ApiText } from '../openapi/openapi-responses';
import { WitnessedCheckpointView, WitnessView } from './dto/witnessing.view';
import { WitnessingReadsService } from './witnessing-reads.service';
import { ReadAccount } from '../read-account/read-account.decorator';

/** The checkpoint log and its witnesses (docs/contract.md §18). */
@ApiTags('witnessing')
@Controller('v1')
export class WitnessingController {
  constructor(private readonly reads: WitnessingReadsService) {}

  @Get('checkpoint-log')
  @RequireScopes(READ)
  @UseInterceptors(PlainTextInterceptor)
  @ApiOperation({ summary: 'The latest checkpoint of the checkpoint log, with every valid witness cosignature' })
  @ApiText('origin, size, base64 root, blank line, the log’s signature line, the cosignature lines')
  @ApiErrors(404)
  checkpointLog(@Query() _query: NoQueryDto) {
    return this.reads.latest();
  }

  @Get('witnesses')
  @RequireScopes(READ)
  @ApiOperation({ summary: 'The witnesses the checkpoint log is submitted to (WITNESSES)' })
  @ApiDataList(WitnessView)
  witnesses(@Query() _query: NoQueryDto) {
    return this.reads.witnesses();
  }

  @Get('chain/:chainId/checkpoint/witnessed')
  @RequireScopes(READ)
  @ApiOperation({
    summary: 'The chain’s latest checkpoint included in a log checkpoint with a quorum of witness cosignatures',
  })
  @ApiData(WitnessedCheckpointView)
  @ApiErrors(404)
  witnessed(@ReadAccount() account: string, @Param('chainId') chainId: string, @Query() _query: NoQueryDto) {
    return this.reads.witnessed(account, chainId);
  }
}
