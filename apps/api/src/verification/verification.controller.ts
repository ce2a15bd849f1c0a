import { Controller, Get, Param, Query } from '@nestjs/common';
import { Account } from '@app/auth';
import { NoQueryDto } from '../common/no-query.dto';
import { VerificationService } from './verification.service';

/** Read-only: the default `read` scope. */
@Controller('v1/events')
export class VerificationController {
  constructor(private readonly verification: VerificationService) {}

  @Get(':id/verify')
  verify(@Account() account: string, @Param('id') id: string, @Query() _query: NoQueryDto) {
    return this.verification.verify(account, id);
  }
}
