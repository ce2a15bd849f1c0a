import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { Account, RequireScope } from '@app/auth';
import { NoQueryDto } from '../common/no-query.dto';
import { CreateEventDto } from './dto/create-event.dto';
import { ListEventsQuery } from './dto/list-events.query';
import { EventsService } from './events.service';

@Controller('v1/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Post()
  @HttpCode(201)
  @RequireScope('ingest')
  async append(
    @Account() account: string,
    @Body() dto: CreateEventDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Query() _query: NoQueryDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    const { body, replayed } = await this.events.append(account, dto, idempotencyKey);
    if (replayed) res.setHeader('Idempotent-Replayed', 'true');
    return body;
  }

  @Get()
  list(@Account() account: string, @Query() query: ListEventsQuery) {
    return this.events.list(account, query);
  }

  @Get(':id')
  get(@Account() account: string, @Param('id') id: string, @Query() _query: NoQueryDto) {
    return this.events.get(account, id);
  }
}
