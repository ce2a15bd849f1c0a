import { Controller, Get, Param, Query, UseInterceptors } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Account, Public } from '@app/auth';
import { ClientGone } from '../common/client-gone.decorator';
import { NoQueryDto } from '../common/no-query.dto';
import { ApiData, ApiErrors, ApiText } from '../openapi/openapi-responses';
import { ChainVerificationService } from './chain-verification.service';
import { CheckpointsService } from './checkpoints.service';
import { ChainVerificationView } from './dto/chain-verification.view';
import { PlainTextInterceptor } from './plain-text.interceptor';

/** Signed checkpoints (C2SP signed notes, as text) and whole-chain verification. */
@ApiTags('checkpoints')
@Controller('v1')
export class CheckpointsController {
  constructor(
    private readonly checkpoints: CheckpointsService,
    private readonly verification: ChainVerificationService,
  ) {}

  @Get('chain/:chainId/checkpoint')
  @UseInterceptors(PlainTextInterceptor)
  @ApiOperation({
    summary: 'The chain’s latest signed checkpoint (C2SP signed note), signing a new one when the chain grew',
  })
  @ApiText('origin, size, base64 head hash, blank line, signature lines')
  @ApiErrors(404)
  checkpoint(@Account() account: string, @Param('chainId') chainId: string, @Query() _query: NoQueryDto) {
    return this.checkpoints.latest(account, chainId);
  }

  @Get('chain/:chainId/verify')
  @ApiOperation({ summary: 'Walk the whole chain: every hash, every link, every stored checkpoint' })
  @ApiData(ChainVerificationView)
  @ApiErrors(404)
  verify(
    @Account() account: string,
    @Param('chainId') chainId: string,
    @Query() _query: NoQueryDto,
    @ClientGone() clientGone: AbortSignal,
  ) {
    return this.verification.verify(account, chainId, clientGone);
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
