import { OmitType, PartialType } from '@nestjs/swagger';
import { ApiSchemaKeywords } from '../../../openapi/openapi-responses';
import { CreateDestinationDto } from './create-destination.dto';

/**
 * Body of PATCH …/destinations/:destinationId: any of the creation's settings but `kind` (a 400
 * naming it, as any unknown field) and `start` (replay moves a destination instead). `q: null`
 * clears the filter (any other null is a 400); `headers` replaces every custom header (`{}`: none).
 */
@ApiSchemaKeywords({ additionalProperties: false })
export class ChangeDestinationDto extends PartialType(OmitType(CreateDestinationDto, ['kind', 'start'] as const), {
  // Absent leaves a setting as it is; null is refused (but by q, whose null clears the filter).
  skipNullProperties: false,
}) {}
