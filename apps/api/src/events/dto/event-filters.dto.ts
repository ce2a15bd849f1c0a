import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Matches, registerDecorator, ValidationArguments } from 'class-validator';
import {
  CHAIN_ID,
  MAX_ACTION_LENGTH,
  MAX_ACTOR_LENGTH,
  MAX_RESOURCE_LENGTH,
  MAX_SEARCH_QUERY_LENGTH,
  DATE_TIME_TEXT,
  isInstant,
} from '@app/common';
import { IsSearchQuery } from './search-query.validator';
import { IsEventText } from './storable.validator';

export const ISO_MESSAGE = 'must be an ISO 8601 date or date-time with an offset, e.g. 2026-11-22T07:24:53.449Z';

/** An instant as `instantMillis` reads it (instant.ts); `required` says so in the message. */
export function IsInstant(required = false) {
  return (target: object, propertyName: string): void => {
    registerDecorator({
      name: 'isInstant',
      target: target.constructor,
      propertyName,
      validator: {
        validate: isInstant,
        defaultMessage: (args: ValidationArguments) =>
          `${args.property} ${required ? 'is required and ' : ''}${ISO_MESSAGE}`,
      },
    });
  };
}

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
  @Matches(CHAIN_ID, { message: 'chain_id must be a chain id (chn_ and a ULID)' })
  chain_id?: string;

  @ApiPropertyOptional({
    description: `Only events after this instant, exclusive. ${DATE_TIME_TEXT}`,
    format: 'date-time',
    example: '2026-11-01T00:00:00Z',
  })
  @IsOptional()
  @IsInstant()
  after?: string;

  @ApiPropertyOptional({
    description: `Only events before this instant, exclusive. ${DATE_TIME_TEXT}`,
    format: 'date-time',
    example: '2026-12-01T00:00:00Z',
  })
  @IsOptional()
  @IsInstant()
  before?: string;
}
