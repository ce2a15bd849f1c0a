import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength } from 'class-validator';
import { EventFiltersDto } from './event-filters.dto';

/** GET /v1/events/stream: the list's filters and q, and where to resume. */
export class StreamEventsQuery extends EventFiltersDto {
  @ApiPropertyOptional({
    description:
      'Resume right after this event: the `id` of the last event received (the Last-Event-ID header does the same; this wins)',
    maxLength: 8192,
  })
  @IsOptional()
  @IsString()
  @MaxLength(8192)
  last_event_id?: string;
}
