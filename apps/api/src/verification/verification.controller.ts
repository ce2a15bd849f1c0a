import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Account } from '@app/auth';
import { NoQueryDto } from '../common/no-query.dto';
import { ApiData, ApiErrors } from '../openapi/openapi-responses';
import { VerificationResultView } from './dto/verification-result.view';
import { VerificationService } from './verification.service';

/** Read-only: the default `read` scope. */
@ApiTags('verification')
@Controller('v1/events')
export class VerificationController {
  constructor(private readonly verification: VerificationService) {}

  @Get(':id/verify')
  @ApiOperation({ summary: 'Recompute one event’s hash and check its link to the previous event' })
  @ApiData(VerificationResultView)
  @ApiErrors(404)
  verify(@Account() account: string, @Param('id') id: string, @Query() _query: NoQueryDto) {
    return this.verification.verify(account, id);
  }
}
