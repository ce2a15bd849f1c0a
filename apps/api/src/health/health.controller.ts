import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '@app/auth';
import { AppError } from '@app/common';
import { TransactionRunner } from '@app/database';
import { ApiData, ApiErrors } from '../openapi/openapi-responses';
import { HealthView } from './dto/health.view';

@ApiTags('health')
@Controller('health')
@Public()
export class HealthController {
  constructor(private readonly database: TransactionRunner) {}

  @Get('live')
  @ApiOperation({ summary: 'The process answers' })
  @ApiData(HealthView)
  live() {
    return { data: { status: 'ok' } };
  }

  @Get('ready')
  @ApiOperation({ summary: 'The database answers (503 SERVICE_UNAVAILABLE otherwise)' })
  @ApiData(HealthView)
  @ApiErrors(503)
  async ready() {
    try {
      await this.database.ping();
    } catch {
      throw AppError.unavailable('The database is not answering.', 5);
    }
    return { data: { status: 'ok' } };
  }
}
