import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsIn,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateBy,
} from 'class-validator';
import { MAX_KEY_NAME_LENGTH, Scope, SCOPES, isInstant } from '@app/common';
import { ApiSchemaKeywords } from '../../openapi/openapi-responses';

/** No control characters: a name is shown to people. */
const KEY_NAME = /^\P{Cc}*$/u;

/** Body of POST /v1/accounts/:accountId/keys. */
@ApiSchemaKeywords({ additionalProperties: false })
export class CreateKeyDto {
  @ApiProperty({ minLength: 1, maxLength: MAX_KEY_NAME_LENGTH, example: 'billing-service' })
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_KEY_NAME_LENGTH)
  @Matches(KEY_NAME, { message: 'name must not contain control characters' })
  name!: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...SCOPES] },
    minItems: 1,
    maxItems: SCOPES.length,
    uniqueItems: true,
    description: 'An admin gives at most ingest, read, admin; only an operator gives operator, to keys of system',
    example: ['ingest', 'read'],
  })
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(SCOPES.length)
  @ArrayUnique()
  @IsIn(SCOPES, { each: true, message: `each scope must be one of ${SCOPES.join(', ')}` })
  scopes!: Scope[];

  @ApiPropertyOptional({
    format: 'date-time',
    description: 'In the future; absent: never',
    example: '2027-01-01T00:00:00Z',
  })
  @IsOptional()
  @IsString()
  @ValidateBy(
    { name: 'isInstant', validator: { validate: isInstant } },
    { message: 'expiresAt must be an ISO 8601 date-time with an offset' },
  )
  expiresAt?: string;
}
