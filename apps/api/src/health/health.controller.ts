import { Controller, Get, Query } from '@nestjs/common';
import { ApiOperation, ApiTags } from '@nestjs/swagger';
import { DataSource } from 'typeorm';
import { Public } from '@app/auth';
import { AppError } from '@app/common';
import { NoQueryDto } from '../common/no-query.dto';

@ApiTags('health')
@Controller('health')
@Public()
export class HealthController {
  constructor(private readonly dataSource: DataSource) {}

  @Get('live')
  @ApiOperation({ summary: 'The process answers' })
  live(@Query() _query: NoQueryDto) {
    return { data: { status: 'ok' } };
  }

  @Get('ready')
  @ApiOperation({ summary: 'The database answers (503 SERVICE_UNAVAILABLE otherwise)' })
  async ready(@Query() _query: NoQueryDto) {
    try {
      await this.dataSource.query('SELECT 1');
    } catch {
      throw AppError.unavailable('The database is not answering.', 5);
    }
    return { data: { status: 'ok' } };
  }
}
