import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Account, RequireScope } from '@app/auth';
import { IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_TEXT, MAX_IDEMPOTENCY_KEY_LENGTH } from '@app/common';
import { NoQueryDto } from '../common/no-query.dto';
import { ApiData, ApiErrors, ApiPage } from '../openapi/openapi-responses';
import { CreateEventDto } from './dto/create-event.dto';
import { EventView } from './dto/event.view';
import { ListEventsQuery } from './dto/list-events.query';
import { EventsService } from './events.service';

@ApiTags('events')
@Controller('v1/events')
export class EventsController {
  constructor(private readonly events: EventsService) {}

  @Post()
  @HttpCode(201)
  @RequireScope('ingest')
  @ApiOperation({
    summary: 'Append an event to its chain',
    description: 'Scope ingest. A 201 means the event is committed.',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description: `${IDEMPOTENCY_KEY_TEXT}: a retry with the same key and body replays the first response (Idempotent-Replayed: true); kept 24 hours`,
    schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH, pattern: IDEMPOTENCY_KEY.source },
  })
  @ApiData(EventView, 201, 'Appended, or the replay of the first response with this Idempotency-Key', {
    'Idempotent-Replayed': {
      description: 'Present when this is the replay of an earlier response with the same Idempotency-Key',
      schema: { type: 'string', enum: ['true'] },
    },
  })
  @ApiErrors(409, 413, 415, 422)
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
  @ApiOperation({ summary: 'List events, newest first', description: 'Filters combine with AND.' })
  @ApiPage(EventView)
  @ApiErrors()
  list(@Account() account: string, @Query() query: ListEventsQuery) {
    return this.events.list(account, query);
  }

  @Get(':id')
  @ApiOperation({ summary: 'One event' })
  @ApiData(EventView)
  @ApiErrors(404)
  get(@Account() account: string, @Param('id') id: string, @Query() _query: NoQueryDto) {
    return this.events.get(account, id);
  }
}
