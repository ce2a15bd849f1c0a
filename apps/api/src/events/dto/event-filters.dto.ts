import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsOptional, IsString, Matches } from 'class-validator';
import {
  CHAIN_ID,
  MAX_ACTION_LENGTH,
  MAX_ACTOR_LENGTH,
  MAX_RESOURCE_LENGTH,
  MAX_SEARCH_QUERY_LENGTH,
} from '@app/common';
import { IsSearchQuery } from './search-query.validator';
import { IsEventText } from './storable.validator';

/** ISO 8601: a date, or a date and time with an explicit offset (never ambiguous local time). */
export const ISO_DATETIME = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;
/** What ISO_DATETIME accepts beyond RFC 3339's date-time, for the OpenAPI description. */
export const DATE_TIME_TEXT =
  'An RFC 3339 date-time with an offset; a date alone (midnight UTC) or a time without seconds is also accepted.';
const ISO_MESSAGE = 'must be an ISO 8601 date or date-time with an offset, e.g. 2026-11-22T07:24:53.449Z';

/** The filters shared by GET /v1/events and GET /v1/events/export. */
export class EventFiltersDto {
  @ApiPropertyOptional({
    description:
      'A search (docs/search.md): terms separated by spaces, all of which must hold. `field:value`, `-field:value` ' +
      '(not), `field:value*` (prefix: actor, action, resource), `timestamp:>=T` (also `>`, `<=`, `<`), ' +
      '`context.<path>:value`; fields `actor`, `action`, `resource`, `chain` (name), `chain_id`. Quote a value with ' +
      'spaces or `:` in double quotes (`\\"` and `\\\\` escape). Combines with the other filters (AND). A malformed ' +
      '`q` is a 400 naming its 0-based character offset.',
    maxLength: MAX_SEARCH_QUERY_LENGTH,
    example: 'action:order.* context.order.id:4711 -actor:"system:cron"',
  })
  @IsOptional()
  @IsSearchQuery()
  q?: string;

  @ApiPropertyOptional({ description: 'Exact actor', minLength: 1, maxLength: MAX_ACTOR_LENGTH })
  @IsOptional()
  @IsEventText(MAX_ACTOR_LENGTH)
  actor?: string;

  @ApiPropertyOptional({ description: 'Exact action', minLength: 1, maxLength: MAX_ACTION_LENGTH })
  @IsOptional()
  @IsEventText(MAX_ACTION_LENGTH)
  action?: string;

  @ApiPropertyOptional({ description: 'Exact resource', minLength: 1, maxLength: MAX_RESOURCE_LENGTH })
  @IsOptional()
  @IsEventText(MAX_RESOURCE_LENGTH)
  resource?: string;

  @ApiPropertyOptional({ description: 'A chain id', pattern: CHAIN_ID.source })
  @IsOptional()
  @IsString()
  @Matches(CHAIN_ID, { message: 'chain_id must be a chain id (chn_ + 26 characters)' })
  chain_id?: string;

  @ApiPropertyOptional({
    description: `Only events after this instant, exclusive. ${DATE_TIME_TEXT}`,
    format: 'date-time',
    example: '2026-11-01T00:00:00Z',
  })
  @IsOptional()
  @IsString()
  @Matches(ISO_DATETIME, { message: `after ${ISO_MESSAGE}` })
  @IsISO8601({ strict: true }, { message: `after ${ISO_MESSAGE}` })
  after?: string;

  @ApiPropertyOptional({
    description: `Only events before this instant, exclusive. ${DATE_TIME_TEXT}`,
    format: 'date-time',
    example: '2026-12-01T00:00:00Z',
  })
  @IsOptional()
  @IsString()
  @Matches(ISO_DATETIME, { message: `before ${ISO_MESSAGE}` })
  @IsISO8601({ strict: true }, { message: `before ${ISO_MESSAGE}` })
  before?: string;
}
