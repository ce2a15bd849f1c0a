import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsOptional, IsString, Length, Matches } from 'class-validator';
import { ACCOUNT_ID, MAX_ERASURE_FIELDS, MAX_ERASURE_REASON_LENGTH, MAX_SEARCH_QUERY_LENGTH } from '@app/common';
import { ApiSchemaKeywords } from '../../openapi/openapi-responses';
import { IsSearchQuery } from '../../events/dto/search-query.validator';

/** Body of POST /v1/erasures (docs/contract.md §17). */
@ApiSchemaKeywords({ additionalProperties: false })
export class EraseDto {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_SEARCH_QUERY_LENGTH,
    description:
      'The events to erase, as GET /v1/events?q= finds them (docs/contract.md §13); at least one term. Never stored nor logged',
    example: 'actor:"alice@example.com"',
  })
  @IsString()
  @Length(1, MAX_SEARCH_QUERY_LENGTH)
  @IsSearchQuery()
  q!: string;

  @ApiProperty({
    type: [String],
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
  fields!: string[];

  @ApiProperty({ minLength: 1, maxLength: MAX_ERASURE_REASON_LENGTH, example: 'GDPR Art. 17 request #4711' })
  @IsString()
  @Length(1, MAX_ERASURE_REASON_LENGTH)
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
}
