import { Body, Controller, Get, Headers, HttpCode, Param, Post, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Account, AuthenticatedKey, CallerKey, INGEST, READ, RequireScopes } from '@app/auth';
import { IDEMPOTENCY_KEY, IDEMPOTENCY_KEY_TEXT, MAX_BATCH_BODY_BYTES, MAX_IDEMPOTENCY_KEY_LENGTH } from '@app/common';
import { AdmitBody, BodyLimit } from '../common/json-body';
import { NoQueryDto } from '../common/no-query.dto';
import { ApiData, ApiDataList, ApiErrors, ApiPage, errorResponse } from '../openapi/openapi-responses';
import { CreateEventBatchDto } from './dto/create-event-batch.dto';
import { CreateEventDto } from './dto/create-event.dto';
import { EventView } from './dto/event.view';
import { ListEventsQuery } from './dto/list-events.query';
import { StreamEventsQuery } from './dto/stream-events.query';
import { AppendQueue } from './append/append-queue';
import { AppendOutcome, EventsService } from './events.service';
import { EventStreamService } from './stream/event-stream.service';
import { BoundedRead } from '../reads/bounded-read.decorator';
import { ReadAccount } from '../read-account/read-account.decorator';

const REPLAYED = {
  description: 'Present when this is the replay of an earlier response with the same Idempotency-Key',
  schema: { type: 'string', enum: ['true'] },
};

@ApiTags('events')
@Controller('v1/events')
export class EventsController {
  constructor(
    private readonly events: EventsService,
    private readonly streams: EventStreamService,
  ) {}

  @Post()
  @RequireScopes(INGEST)
  @HttpCode(201)
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
    'Idempotent-Replayed': REPLAYED,
  })
  @ApiErrors(409, 413, 415, 422)
  @AdmitBody(AppendQueue)
  async append(
    @Account() account: string,
    @Body() dto: CreateEventDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Query() _query: NoQueryDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return send(res, await this.events.append(account, dto, idempotencyKey));
  }

  @Post('batch')
  @RequireScopes(INGEST)
  @HttpCode(201)
  @ApiOperation({
    summary: 'Append 1–1,000 events, all or nothing',
    description:
      'Scope ingest. Each item is exactly a POST /v1/events body; items may name different chains. A 201 means every event is committed, answered in request order; events of one chain get consecutive positions. A 400 names every bad item by its path (events[3].actor) and nothing is written. Body up to 8 MiB.',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: false,
    description:
      'As on POST /v1/events, for the whole batch; one namespace per account: a key first used on the other endpoint is a 422',
    schema: { type: 'string', minLength: 1, maxLength: MAX_IDEMPOTENCY_KEY_LENGTH, pattern: IDEMPOTENCY_KEY.source },
  })
  @ApiDataList(EventView, 201, 'Appended, or the replay of the first response with this Idempotency-Key', {
    'Idempotent-Replayed': REPLAYED,
  })
  @ApiErrors(409, 415, 422)
  @ApiResponse({ status: 413, ...errorResponse(413, 'PAYLOAD_TOO_LARGE: body over 8 MiB') })
  @BodyLimit(MAX_BATCH_BODY_BYTES)
  @AdmitBody(AppendQueue)
  async appendBatch(
    @Account() account: string,
    @Body() dto: CreateEventBatchDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Query() _query: NoQueryDto,
    @Res({ passthrough: true }) res: Response,
  ) {
    return send(res, await this.events.appendBatch(account, dto, idempotencyKey));
  }

  @Get()
  @RequireScopes(READ)
  @ApiOperation({ summary: 'List events, newest first', description: 'Filters combine with AND.' })
  @ApiPage(EventView)
  @BoundedRead()
  list(@ReadAccount() account: string, @Query() query: ListEventsQuery) {
    return this.events.list(account, query);
  }

  @Get('stream')
  @RequireScopes(READ)
  @ApiOperation({
    summary: 'Follow the account’s events as they are appended (Server-Sent Events)',
    description:
      'Scope read. The list’s filters and q. Each event: `id: <opaque position>`, `event: event`, `data: <Event JSON>`; a comment line at least every 15 s. Starts with events appended after the request or, with Last-Event-ID (header) or last_event_id, right after that event: every matching event appended by any instance is sent exactly once, each chain in position order. At most STREAMS_PER_ACCOUNT (10) open streams per account per instance (429 beyond). A reader that keeps reading gets at least 10,000 events/s from a backlog, and each event within 2 s of its append. A reader that takes nothing for EXPORT_STALL_TIMEOUT_SECONDS (30) is disconnected, and a revoked key’s streams within 5 s; resume with the last id.',
  })
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'The id of the last event received' })
  @ApiResponse({
    status: 200,
    description: 'An endless text/event-stream',
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiErrors()
  stream(
    @CallerKey() key: AuthenticatedKey,
    @ReadAccount() account: string,
    @Query() query: StreamEventsQuery,
    @Headers('last-event-id') lastEventId: string | undefined,
    @Res() res: Response,
  ) {
    return this.streams.stream({ accountId: account, keyId: key.keyId }, query, lastEventId, res);
  }

  @Get(':id')
  @RequireScopes(READ)
  @ApiOperation({ summary: 'One event' })
  @ApiData(EventView)
  @ApiErrors(404)
  get(@ReadAccount() account: string, @Param('id') id: string, @Query() _query: NoQueryDto) {
    return this.events.get(account, id);
  }
}

/**
 * An append's answer is JSON text already (for a keyed request, the text stored with it): sent as
 * is, with the Content-Type `res.json` would give (Express adds `; charset=utf-8` to a string).
 */
function send(res: Response, { json, replayed }: AppendOutcome): string {
  res.setHeader('Content-Type', 'application/json');
  if (replayed) res.setHeader('Idempotent-Replayed', 'true');
  return json;
}
