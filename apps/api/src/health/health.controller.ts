import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { Public } from '@app/auth';
import { AppError } from '@app/common';
import { TransactionRunner } from '@app/database';
import { ApiData, ApiErrors } from '../openapi/openapi-responses';
import { HealthView } from './dto/health.view';
import { NoQueryDto } from '../common/no-query.dto';
import { ShutdownService } from '../lifecycle/shutdown.service';

@ApiTags('health')
@Controller('health')
@Public()
export class HealthController {
  constructor(
    private readonly database: TransactionRunner,
    private readonly shutdown: ShutdownService,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'The process answers' })
  @ApiData(HealthView)
  live(@Query() _query: NoQueryDto) {
    return { data: { status: 'ok' } };
  }

  @Get('ready')
  @ApiOperation({ summary: 'The database answers and the service is not stopping (503 SERVICE_UNAVAILABLE otherwise)' })
  @ApiData(HealthView)
  @ApiErrors(503)
  async ready(@Query() _query: NoQueryDto) {
    try {
      await this.database.ping();
    } catch {
      throw AppError.unavailable('The database is not answering.', 5);
    }
    // After the ping: a check in progress when a stop begins answers 503 too.
    if (this.shutdown.stopping) throw AppError.unavailable('The service is stopping.', 5);
    return { data: { status: 'ok' } };
  }
}
