import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  ArrayUnique,
  IsArray,
  IsIn,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateBy,
} from 'class-validator';
import { MAX_KEY_NAME_LENGTH, MayBeAbsent, Scope, SCOPES, isInstant } from '@app/common';
import { NO_CONTROL_CHARACTERS } from '../../common/text-patterns';
import { ApiSchemaKeywords } from '../../openapi/openapi-responses';

/** Body of POST /v1/accounts/:accountId/keys. */
@ApiSchemaKeywords({ additionalProperties: false })
export class CreateKeyDto {
  @ApiProperty({
    minLength: 1,
    maxLength: MAX_KEY_NAME_LENGTH,
    pattern: NO_CONTROL_CHARACTERS.source,
    description: 'Shown to people: no control characters, no lone UTF-16 surrogates (else 400)',
    example: 'billing-service',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_KEY_NAME_LENGTH)
  @Matches(NO_CONTROL_CHARACTERS, { message: 'name must not contain control characters' })
  name!: string;

  @ApiProperty({
    type: 'array',
    items: { type: 'string', enum: [...SCOPES] },
    minItems: 1,
    maxItems: SCOPES.length,
    uniqueItems: true,
    description:
      'An admin gives at most ingest, read, admin; only an operator gives operator, and only to keys of system (else 403)',
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
    description:
      'When the key stops working: later than the moment the request arrives (else 400 VALIDATION_ERROR); absent: never (null is refused)',
    example: '2027-01-01T00:00:00Z',
  })
  @MayBeAbsent()
  @IsString()
  @ValidateBy(
    { name: 'isInstant', validator: { validate: isInstant } },
    { message: 'expiresAt must be an ISO 8601 date-time with an offset' },
  )
  expiresAt?: string;
}
