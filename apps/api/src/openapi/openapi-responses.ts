import { applyDecorators, Type } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ErrorCode } from '@app/common';

const ERROR_CODES: Record<ErrorCode, true> = {
  VALIDATION_ERROR: true,
  UNAUTHORIZED: true,
  FORBIDDEN: true,
  NOT_FOUND: true,
  IDEMPOTENCY_IN_PROGRESS: true,
  PAYLOAD_TOO_LARGE: true,
  UNSUPPORTED_MEDIA_TYPE: true,
  EXPORT_LIMIT_EXCEEDED: true,
  IDEMPOTENCY_KEY_REUSED: true,
  RATE_LIMITED: true,
  SERVICE_UNAVAILABLE: true,
  INTERNAL_ERROR: true,
};

class ErrorBody {
  @ApiProperty({ enum: Object.keys(ERROR_CODES) })
  code!: ErrorCode;

  @ApiProperty()
  message!: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'e.g. fields: [{ field, message }] for VALIDATION_ERROR',
  })
  details!: Record<string, unknown>;
}

/** Every failure (contract §5). */
export class ErrorEnvelope {
  @ApiProperty({ type: ErrorBody })
  error!: ErrorBody;
}

const WHEN: Record<number, string> = {
  400: 'VALIDATION_ERROR: bad body or query; details.fields lists { field, message }',
  401: 'UNAUTHORIZED: no key, wrong scheme, unknown or revoked key',
  403: 'FORBIDDEN: the key lacks the scope',
  404: 'NOT_FOUND: unknown id, or another account’s',
  409: 'IDEMPOTENCY_IN_PROGRESS: a request with this Idempotency-Key is still being processed (Retry-After)',
  413: 'PAYLOAD_TOO_LARGE: body over 64 KiB',
  415: 'UNSUPPORTED_MEDIA_TYPE: the body is not application/json',
  422: 'EXPORT_LIMIT_EXCEEDED or IDEMPOTENCY_KEY_REUSED',
  429: 'RATE_LIMITED: over the key’s rate, or too many whole-chain verifications at once (Retry-After)',
  503: 'SERVICE_UNAVAILABLE: the database is unreachable or the append queue is full; nothing was written (Retry-After)',
};

/** The error responses of an authenticated route: the ones every such route has, and `more`. */
export function ApiErrors(...more: (404 | 409 | 413 | 415 | 422)[]) {
  const statuses = [400, 401, 403, ...more, 429, 503].sort((a, b) => a - b);
  return applyDecorators(
    ApiExtraModels(ErrorEnvelope),
    ...statuses.map((status) =>
      ApiResponse({ status, description: WHEN[status], schema: { $ref: getSchemaPath(ErrorEnvelope) } }),
    ),
  );
}

/** `{ data: <model> }` with `status`. */
export function ApiData(model: Type<unknown>, status = 200, description = 'OK') {
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status,
      description,
      schema: { type: 'object', required: ['data'], properties: { data: { $ref: getSchemaPath(model) } } },
    }),
  );
}

/** `{ data: <model>[], nextCursor? }`: a page, newest first. */
export function ApiPage(model: Type<unknown>) {
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status: 200,
      description: 'A page; nextCursor is present when more items exist',
      schema: {
        type: 'object',
        required: ['data'],
        properties: {
          data: { type: 'array', items: { $ref: getSchemaPath(model) } },
          nextCursor: { type: 'string', description: 'Pass as cursor to get the next page' },
        },
      },
    }),
  );
}
