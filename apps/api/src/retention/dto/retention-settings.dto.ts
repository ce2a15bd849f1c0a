import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsBoolean, IsInt, Max, Min, ValidateIf } from 'class-validator';
import { MAX_LEGAL_HOLD_REASON_LENGTH, MAX_RETENTION_DAYS } from '@app/common';
import { ApiSchemaKeywords } from '../../openapi/openapi-responses';
import { IsEventText } from '../../events/dto/storable.validator';

/** Body of PUT /v1/accounts/:accountId/retention and PUT /v1/chain/:chainId/retention (contract §14). */
@ApiSchemaKeywords({ additionalProperties: false })
export class RetentionDto {
  @ApiProperty({
    type: 'integer',
    nullable: true,
    minimum: 1,
    maximum: MAX_RETENTION_DAYS,
    description: 'Days to keep events. null: forever (an account), or follow the account (a chain)',
    example: 365,
  })
  @ValidateIf((dto: RetentionDto) => dto.days !== null)
  @IsInt({ message: `days must be an integer from 1 to ${MAX_RETENTION_DAYS}, or null` })
  @Min(1, { message: `days must be an integer from 1 to ${MAX_RETENTION_DAYS}, or null` })
  @Max(MAX_RETENTION_DAYS, { message: `days must be an integer from 1 to ${MAX_RETENTION_DAYS}, or null` })
  days!: number | null;
}

/** Body of PUT /v1/accounts/:accountId/legal-hold and PUT /v1/chain/:chainId/legal-hold (contract §14). */
@ApiSchemaKeywords({ additionalProperties: false })
export class LegalHoldDto {
  @ApiProperty({ description: 'true: nothing of it is pruned until the hold is lifted' })
  @IsBoolean()
  hold!: boolean;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: MAX_LEGAL_HOLD_REASON_LENGTH,
    description: 'Why (required when holding)',
    example: 'litigation 2026-117',
  })
  @ValidateIf((dto: LegalHoldDto) => dto.hold === true || dto.reason !== undefined)
  @IsEventText(MAX_LEGAL_HOLD_REASON_LENGTH)
  reason?: string;
}
