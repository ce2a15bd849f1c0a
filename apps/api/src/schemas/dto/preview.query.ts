import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { DecimalInteger } from '@app/common';

export const DEFAULT_PREVIEW_EVENTS = 1_000;
export const MAX_PREVIEW_EVENTS = 10_000;
const LIMIT_MESSAGE = `limit must be an integer between 1 and ${MAX_PREVIEW_EVENTS}`;

/** The query of POST …/schemas/:action/preview: how many of the action's latest events to check. */
export class PreviewQuery {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: MAX_PREVIEW_EVENTS,
    default: DEFAULT_PREVIEW_EVENTS,
    description: 'How many of the latest events of the action (or pattern) to check',
  })
  @IsOptional()
  @DecimalInteger()
  @IsInt({ message: LIMIT_MESSAGE })
  @Min(1, { message: LIMIT_MESSAGE })
  @Max(MAX_PREVIEW_EVENTS, { message: LIMIT_MESSAGE })
  limit: number = DEFAULT_PREVIEW_EVENTS;
}
