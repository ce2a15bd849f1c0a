import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';
import { DEFAULT_ROTATION_OVERLAP_SECONDS, MAX_ROTATION_OVERLAP_SECONDS, MayBeAbsent } from '@app/common';
import { ApiSchemaKeywords } from '../../openapi/openapi-responses';

const MESSAGE = `overlapSeconds must be an integer from 0 to ${MAX_ROTATION_OVERLAP_SECONDS}`;

/** Body of POST /v1/accounts/:accountId/keys/:keyId/rotate. */
@ApiSchemaKeywords({ additionalProperties: false })
export class RotateKeyDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_ROTATION_OVERLAP_SECONDS,
    description: `Seconds the old key keeps working from now (an integer, never null); absent: ${DEFAULT_ROTATION_OVERLAP_SECONDS}`,
    example: 600,
  })
  @MayBeAbsent()
  @IsInt({ message: MESSAGE })
  @Min(0, { message: MESSAGE })
  @Max(MAX_ROTATION_OVERLAP_SECONDS, { message: MESSAGE })
  overlapSeconds?: number;
}
