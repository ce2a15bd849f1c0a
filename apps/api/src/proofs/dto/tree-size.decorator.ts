import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional } from 'class-validator';

/** A decimal integer as written in a query string (no sign, exponent, fraction or leading zero). */
const DECIMAL = /^(0|[1-9][0-9]{0,15})$/;

/**
 * A tree size in a query string: a non-negative decimal integer. Anything else (an empty value,
 * `1.5`, `1e3`, ` 2`, a repeated parameter) stays as sent and fails IsInt, so `?from=` is a 400,
 * not a 0. Ranges against the chain's size are the service's (they need the chain).
 */
export function TreeSize(name: string, description: string, required: boolean) {
  const message = `${name} must be a non-negative integer`;
  return applyDecorators(
    (required ? ApiProperty : ApiPropertyOptional)({ type: 'integer', minimum: 0, description }),
    ...(required ? [] : [IsOptional()]),
    Transform(({ value }: { value: unknown }) =>
      typeof value === 'string' && DECIMAL.test(value) ? Number(value) : value,
    ),
    IsInt({ message }),
  );
}
