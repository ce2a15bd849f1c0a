import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '@app/auth';
import { AppError } from '@app/common';
import { TransactionRunner } from '@app/database';

@ApiTags('health')
@Controller('health')
@Public()
export class HealthController {
  constructor(private readonly database: TransactionRunner) {}

  @Get('live')
  @ApiOperation({ summary: 'The process answers' })
  live() {
    return { data: { status: 'ok' } };
  }

  @Get('ready')
  @ApiOperation({ summary: 'The database answers (503 SERVICE_UNAVAILABLE otherwise)' })
  async ready() {
    try {
      await this.database.ping();
    } catch {
      throw AppError.unavailable('The database is not answering.', 5);
    }
    return { data: { status: 'ok' } };
  }
}
