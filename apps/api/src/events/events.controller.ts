import { Body, Controller, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
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
  append(@Account() account: string, @Body() dto: CreateEventDto, @Query() _query: NoQueryDto) {
    return this.events.append(account, dto);
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
