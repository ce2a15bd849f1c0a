import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  IsArray,
  IsBoolean,
  IsInt,
  IsOptional,
  IsString,
  Length,
  Matches,
  Max,
  Min,
  type ValidationArguments,
} from 'class-validator';
import { ACCOUNT_ID, MAX_ERASURE_FIELDS, MAX_ERASURE_REASON_LENGTH, MAX_SEARCH_QUERY_LENGTH } from '@app/common';
import { ApiSchemaKeywords } from '../../openapi/openapi-responses';
import { IsSearchQuery } from '../../events/dto/search-query.validator';

/**
 * What a field path may look like: anything named (`action` too, refused as 422 NOT_ERASABLE by the
 * service) but an empty context member (`context.`).
 */
const ERASURE_FIELD = /^(?!context\.$)[^.]+(\..+)?$/;

/** A required text's length refused in words (issue 40 item 10): `q is required`, not "longer than or equal to 1 characters". */
function lengthMessage(name: string, max: number): (args: ValidationArguments) => string {
  return (args) => (args.value === '' ? `${name} is required` : `${name} must be at most ${max} characters`);
}

/** Above any ERASURE_MAX_EVENTS: a bound for the number itself, the service's limit is checked at commit. */
const MAX_EXPECTED_ERASURE_EVENTS = 1_000_000_000;

/** Body of POST /v1/erasures (docs/contract.md §17). */
@ApiSchemaKeywords({ additionalProperties: false })
export class EraseDto {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_SEARCH_QUERY_LENGTH,
    description:
      'The events to erase, as GET /v1/events?q= finds them (docs/contract.md §13); at least one term that is not negated and names a value (actor:, action:, resource:, chain:, chain_id: or context.<path>:). Never stored nor logged',
    example: 'actor:"alice@example.com"',
  })
  @IsString()
  @Length(1, MAX_SEARCH_QUERY_LENGTH, { message: lengthMessage('q', MAX_SEARCH_QUERY_LENGTH) })
  @IsSearchQuery()
  q!: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: 256, pattern: ERASURE_FIELD.source },
    minItems: 1,
    maxItems: MAX_ERASURE_FIELDS,
    description:
      'The fields to erase: `actor`, `resource`, `context.<member>` (a top-level member) or `context.*` (every member). `action`, `timestamp` and the ids are never erasable (422 NOT_ERASABLE)',
    example: ['actor', 'context.ip'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_ERASURE_FIELDS)
  @IsString({ each: true })
  @Length(1, 256, { each: true })
  @Matches(ERASURE_FIELD, {
    each: true,
    message: 'each of fields must be actor, resource, context.* or context.<member> with a non-empty member',
  })
  fields!: string[];

  @ApiProperty({ minLength: 1, maxLength: MAX_ERASURE_REASON_LENGTH, example: 'GDPR Art. 17 request #4711' })
  @IsString()
  @Length(1, MAX_ERASURE_REASON_LENGTH, { message: lengthMessage('reason', MAX_ERASURE_REASON_LENGTH) })
  reason!: string;

  @ApiPropertyOptional({
    pattern: ACCOUNT_ID.source,
    description: 'The account whose events are erased: required of an operator key; an admin key may name only its own',
  })
  @IsOptional()
  @IsString()
  @Matches(ACCOUNT_ID, { message: 'accountId must be an account id (acc_ and a ULID)' })
  accountId?: string;

  @ApiPropertyOptional({
    description:
      'true: events on version-1 chains (which cannot be erased) are counted in `skipped` instead of refusing the erasure (422 NOT_ERASABLE)',
    default: false,
  })
  @IsOptional()
  @IsBoolean()
  allowPartial?: boolean;

  @ApiPropertyOptional({
    description:
      'true: every check is made and the events that would be erased are counted (`events`, `skipped`), but nothing is erased or recorded',
    default: false,
  })
  @IsOptional()
  @IsBoolean()
  dryRun?: boolean;

  @ApiPropertyOptional({
    minimum: 1,
    maximum: MAX_EXPECTED_ERASURE_EVENTS,
    description:
      "The number of events the caller was shown (a dry run's `events`): when the erasure would change another number of events at commit (an event appended or erased since), it is 409 CONFLICT and nothing is erased",
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(MAX_EXPECTED_ERASURE_EVENTS)
  expectEvents?: number;
}
