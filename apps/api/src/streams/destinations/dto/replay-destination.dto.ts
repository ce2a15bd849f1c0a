import { ApiProperty } from '@nestjs/swagger';
import { IsString, ValidateBy } from 'class-validator';
import { isInstant } from '@app/common';
import { ApiSchemaKeywords } from '../../../openapi/openapi-responses';

/** Body of POST …/destinations/:destinationId/replay; `from` in the future is a 400 too (the service). */
@ApiSchemaKeywords({ additionalProperties: false })
export class ReplayDestinationDto {
  @ApiProperty({
    format: 'date-time',
    description: 'Delivers again every retained event whose timestamp is at or after it; not in the future',
    example: '2026-11-27T00:00:00Z',
  })
  @IsString({ message: 'from is required and must be an ISO 8601 date-time with an offset' })
  @ValidateBy(
    { name: 'isInstant', validator: { validate: isInstant } },
    { message: 'from must be an ISO 8601 date-time with an offset' },
  )
  from!: string;
}
