import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, Max, Min } from 'class-validator';
import { DecimalInteger } from '@app/common';

/**
 * The largest tree size a query may name: the largest integer a JSON number holds exactly. Larger
 * is a 400 before anything is planned or read (no chain is that long).
 */
export const MAX_TREE_SIZE = Number.MAX_SAFE_INTEGER;

/**
 * A tree size in a query string: a non-negative decimal integer up to MAX_TREE_SIZE. Anything else
 * (an empty value, `1.5`, `1e3`, ` 2`, a repeated parameter) stays as sent and fails IsInt, so
 * `?from=` is a 400, not a 0. Ranges against the chain's size are the service's (they need the chain).
 */
export function TreeSize(name: string, description: string, required: boolean) {
  const message = `${name} must be an integer between 0 and ${MAX_TREE_SIZE}`;
  return applyDecorators(
    (required ? ApiProperty : ApiPropertyOptional)({
      type: 'integer',
      minimum: 0,
      maximum: MAX_TREE_SIZE,
      description,
    }),
    ...(required ? [] : [IsOptional()]),
    DecimalInteger(),
    IsInt({ message }),
    Min(0, { message }),
    Max(MAX_TREE_SIZE, { message }),
  );
}
