import { Controller, Get } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Public } from '@app/auth';
import { AppError } from '@app/common';

@Controller('health')
@Public()
export class HealthController {
  constructor(private readonly dataSource: DataSource) {}

  @Get('live')
  live() {
    return { data: { status: 'ok' } };
  }

  @Get('ready')
  async ready() {
    try {
      await this.dataSource.query('SELECT 1');
    } catch {
      throw AppError.unavailable('The database is not answering.', 5);
    }
    return { data: { status: 'ok' } };
  }
}
