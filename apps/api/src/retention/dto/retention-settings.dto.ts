import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, Max, Min, ValidateIf } from 'class-validator';
import { MAX_LEGAL_HOLD_REASON_LENGTH, MAX_RETENTION_DAYS } from '@app/common';
import { ApiSchemaKeywords } from '../../openapi/openapi-responses';
import { IsEventText } from '../../events/dto/storable.validator';

/** Body of PUT /v1/accounts/:accountId/retention and PUT /v1/chain/:chainId/retention (docs/contract.md §14). */
@ApiSchemaKeywords({ additionalProperties: false })
export class RetentionDto {
  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: MAX_RETENTION_DAYS,
    description:
      'Days to keep events. null: forever (an account), or follow the account (a chain). An `_audit` chain takes no fewer than AUDIT_MIN_RETENTION_DAYS (365 unless configured): a shorter one is 400; an account default shorter than that applies to its `_audit` chain as that minimum',
    example: 365,
  })
  @ValidateIf((dto: RetentionDto) => dto.days !== null)
  @IsInt({ message: `days must be an integer from 1 to ${MAX_RETENTION_DAYS}, or null` })
  @Min(1, { message: `days must be an integer from 1 to ${MAX_RETENTION_DAYS}, or null` })
  @Max(MAX_RETENTION_DAYS, { message: `days must be an integer from 1 to ${MAX_RETENTION_DAYS}, or null` })
  days!: number | null;
}

/**
 * Body of PUT /v1/accounts/:accountId/legal-hold and PUT /v1/chain/:chainId/legal-hold (docs/contract.md §14).
 * Placing a hold takes a reason, lifting it does not: said by `oneOf` too, so generated clients know it.
 */
@ApiSchemaKeywords({
  additionalProperties: false,
  oneOf: [
    {
      description: 'Placing a hold: a reason is required',
      properties: { hold: { type: 'boolean', enum: [true] }, reason: { type: 'string' } },
      required: ['hold', 'reason'],
    },
    { description: 'Lifting a hold', properties: { hold: { type: 'boolean', enum: [false] } }, required: ['hold'] },
  ],
})
export class LegalHoldDto {
  @ApiProperty({ description: 'true: nothing of it is pruned until the hold is lifted' })
  @IsBoolean()
  hold!: boolean;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    minLength: 1,
    maxLength: MAX_LEGAL_HOLD_REASON_LENGTH,
    description:
      'Why. Required (1–512 characters) when `hold` is true; when lifting it may be given, absent or null. A hold placed by an `operator` key is lifted only by an operator key (403 for an admin key)',
    example: 'litigation 2026-117',
  })
  @ValidateIf((dto: LegalHoldDto) => dto.hold === true || (dto.reason !== undefined && dto.reason !== null))
  @IsEventText(MAX_LEGAL_HOLD_REASON_LENGTH)
  reason?: string | null;
}
