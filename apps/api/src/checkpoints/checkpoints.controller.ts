import { Controller, Get, Param, Query, UseInterceptors } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public, READ, RequireScopes } from '@app/auth';
import { NoQueryDto } from '../common/no-query.dto';
import { ApiErrors, ApiText } from '../openapi/openapi-responses';
import { CheckpointsService } from './checkpoints.service';
import { PlainTextInterceptor } from './plain-text.interceptor';
import { ReadAccount } from '../read-account/read-account.decorator';

/** Signed checkpoints (C2SP signed notes, as text) and the key that verifies them. */
@ApiTags('checkpoints')
@Controller('v1')
export class CheckpointsController {
  constructor(private readonly checkpoints: CheckpointsService) {}

  @Get('chain/:chainId/checkpoint')
  @RequireScopes(READ)
  @UseInterceptors(PlainTextInterceptor)
  @ApiOperation({
    summary: 'The chain’s latest signed checkpoint (C2SP signed note), signing a new one when the chain grew',
  })
  @ApiText('origin, size, base64 Merkle root of the first size events, blank line, signature lines')
  @ApiErrors(404)
  checkpoint(@ReadAccount() account: string, @Param('chainId') chainId: string, @Query() _query: NoQueryDto) {
    return this.checkpoints.latest(account, chainId);
  }

  /** Public: auditors need it without a key of ours. */
  @Public()
  @Get('checkpoint-key')
  @UseInterceptors(PlainTextInterceptor)
  @ApiOperation({ summary: 'The verifier key of checkpoints (signed-note format); no key needed' })
  @ApiText('<name>+<hex key id>+<base64 key>')
  checkpointKey(@Query() _query: NoQueryDto) {
    return this.checkpoints.verifierKey();
  }
}
