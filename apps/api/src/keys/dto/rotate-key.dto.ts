import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { DEFAULT_ROTATION_OVERLAP_SECONDS, MAX_ROTATION_OVERLAP_SECONDS } from '@app/common';
import { ApiSchemaKeywords } from '../../openapi/openapi-responses';

const MESSAGE = `overlapSeconds must be an integer from 0 to ${MAX_ROTATION_OVERLAP_SECONDS}`;

/** Body of POST /v1/accounts/:accountId/keys/:keyId/rotate. */
@ApiSchemaKeywords({ additionalProperties: false })
export class RotateKeyDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 0,
    maximum: MAX_ROTATION_OVERLAP_SECONDS,
    description: `How long the old key keeps working; absent: ${DEFAULT_ROTATION_OVERLAP_SECONDS}`,
    example: 600,
  })
  @IsOptional()
  @IsInt({ message: MESSAGE })
  @Min(0, { message: MESSAGE })
  @Max(MAX_ROTATION_OVERLAP_SECONDS, { message: MESSAGE })
  overlapSeconds?: number;
}
