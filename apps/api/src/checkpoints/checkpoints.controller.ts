import { Controller, Get, Param, Query, UseInterceptors } from '@nestjs/common';
import { Account, Public } from '@app/auth';
import { ClientGone } from '../common/client-gone.decorator';
import { NoQueryDto } from '../common/no-query.dto';
import { ChainVerificationService } from './chain-verification.service';
import { CheckpointsService } from './checkpoints.service';
import { PlainTextInterceptor } from './plain-text.interceptor';

/** Signed checkpoints (C2SP signed notes, as text) and whole-chain verification. */
@Controller('v1')
export class CheckpointsController {
  constructor(
    private readonly checkpoints: CheckpointsService,
    private readonly verification: ChainVerificationService,
  ) {}

  @Get('chain/:chainId/checkpoint')
  @UseInterceptors(PlainTextInterceptor)
  checkpoint(@Account() account: string, @Param('chainId') chainId: string, @Query() _query: NoQueryDto) {
    return this.checkpoints.latest(account, chainId);
  }

  @Get('chain/:chainId/verify')
  verify(@Account() account: string, @Param('chainId') chainId: string, @Query() _query: NoQueryDto, @ClientGone() clientGone: AbortSignal) {
    return this.verification.verify(account, chainId, clientGone);
  }

  /** Public: auditors need it without a key of ours. */
  @Public()
  @Get('checkpoint-key')
  @UseInterceptors(PlainTextInterceptor)
  checkpointKey(@Query() _query: NoQueryDto) {
    return this.checkpoints.verifierKey();
  }
}
