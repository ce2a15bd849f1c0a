import { applyDecorators, Type } from '@nestjs/common';
import {
  ApiExtraModels,
  ApiProperty,
  ApiPropertyOptional,
  ApiResponse,
  ApiSchema,
  ApiSchemaOptions,
  getSchemaPath,
} from '@nestjs/swagger';
import type {
  HeaderObject,
  ReferenceObject,
  ResponseObject,
  SchemaObject,
} from '@nestjs/swagger/dist/interfaces/open-api-spec.interface';
import { ErrorCode, MAX_ACTOR_LENGTH, MAX_REQUEST_ID_LENGTH, REQUEST_ID } from '@app/common';

const ERROR_CODES: Record<ErrorCode, true> = {
  VALIDATION_ERROR: true,
  UNAUTHORIZED: true,
  FORBIDDEN: true,
  NOT_FOUND: true,
  METHOD_NOT_ALLOWED: true,
  IDEMPOTENCY_IN_PROGRESS: true,
  CONFLICT: true,
  PRUNED: true,
  PAYLOAD_TOO_LARGE: true,
  UNSUPPORTED_MEDIA_TYPE: true,
  EXPORT_LIMIT_EXCEEDED: true,
  IDEMPOTENCY_KEY_REUSED: true,
  QUERY_TOO_EXPENSIVE: true,
  NOT_ERASABLE: true,
  NOTHING_MATCHED: true,
  RATE_LIMITED: true,
  REQUEST_TIMEOUT: true,
  REQUEST_HEADER_FIELDS_TOO_LARGE: true,
  SERVICE_UNAVAILABLE: true,
  INTERNAL_ERROR: true,
};

/**
 * Schema keywords of a class that @nestjs/swagger has no decorator for. `ApiSchemaOptions` only
 * types `name` and `description`, but every option is copied into the class's schema: `oneOf`
 * states a rule between members (OpenAPI 3.0 has no `if`/`then`), e.g. a member required when
 * another has a given value.
 */
export const ApiSchemaKeywords = (keywords: {
  additionalProperties: boolean;
  oneOf?: SchemaObject[];
}): ClassDecorator => ApiSchema(keywords as ApiSchemaOptions);

export class FieldErrorView {
  @ApiProperty({ description: 'The body member, query parameter or header at fault', example: 'actor' })
  field!: string;

  @ApiProperty({ example: `actor must be shorter than or equal to ${MAX_ACTOR_LENGTH} characters` })
  message!: string;

  @ApiPropertyOptional({
    description: 'An action schema’s violation (contract §19): the JSON Schema keyword that failed',
    example: 'minimum',
  })
  rule?: string;
}

/** The action schema version an event failed (contract §19). */
export class SchemaRefView {
  @ApiProperty({ description: 'The schema’s action pattern that applied', example: 'invoice.*' })
  action!: string;

  @ApiProperty({ type: 'integer', minimum: 1, example: 3 })
  version!: number;
}

@ApiSchemaKeywords({ additionalProperties: true })
class ErrorDetails {
  @ApiPropertyOptional({ type: [FieldErrorView], description: 'VALIDATION_ERROR: each field at fault' })
  fields?: FieldErrorView[];

  @ApiPropertyOptional({ description: 'INTERNAL_ERROR: the id under which the failure was logged' })
  requestId?: string;

  @ApiPropertyOptional({
    type: SchemaRefView,
    description: 'VALIDATION_ERROR of an event that an enforced action schema refused (contract §19): that schema',
  })
  schema?: SchemaRefView;
}

class ErrorBody {
  @ApiProperty({ enum: Object.keys(ERROR_CODES) })
  code!: ErrorCode;

  @ApiProperty()
  message!: string;

  @ApiProperty({ type: ErrorDetails, description: 'Always an object, often empty; other members by code' })
  details!: ErrorDetails;
}

/** Every failure (docs/contract.md §5). */
export class ErrorEnvelope {
  @ApiProperty({ type: ErrorBody })
  error!: ErrorBody;
}

export type ErrorStatus = 400 | 401 | 403 | 404 | 408 | 409 | 410 | 413 | 415 | 422 | 429 | 431 | 500 | 503;

const WHEN: Record<ErrorStatus, string> = {
  400: 'VALIDATION_ERROR: bad body, query parameter (unknown ones included) or header; details.fields lists { field, message }',
  401: 'UNAUTHORIZED: no key, wrong scheme, unknown or revoked key',
  403: 'FORBIDDEN: the key lacks the scope',
  404: 'NOT_FOUND: unknown id, or another account’s',
  408: 'REQUEST_TIMEOUT: the request line, headers or body were not received in time; the connection is closed',
  409: 'IDEMPOTENCY_IN_PROGRESS: a request with this Idempotency-Key is still being processed',
  410: 'PRUNED: a size below the chain’s first retained position (retention pruned it)',
  413: 'PAYLOAD_TOO_LARGE: body over 64 KiB (8 MiB for a batch)',
  415: 'UNSUPPORTED_MEDIA_TYPE: the body is not application/json',
  422: 'EXPORT_LIMIT_EXCEEDED or IDEMPOTENCY_KEY_REUSED',
  429: 'RATE_LIMITED: over the rate per key (per address on public routes), or too many whole-chain verifications at once',
  431: 'REQUEST_HEADER_FIELDS_TOO_LARGE: the request line (the URL) and headers are over 16 KiB together; the connection is closed',
  500: 'INTERNAL_ERROR: logged under the request id, which details.requestId names',
  503: 'SERVICE_UNAVAILABLE: the database is unreachable or the append queue is full; nothing was written',
};

const RETRY_AFTER: HeaderObject = {
  description: 'Seconds to wait before retrying',
  required: true,
  schema: { type: 'integer', minimum: 0 },
};

/** Answers of the HTTP parser's errors (client-errors.ts): the connection cannot be used again. */
const CONNECTION_CLOSE: HeaderObject = {
  description: 'The connection is closed after this answer',
  required: true,
  schema: { type: 'string', enum: ['close'] },
};

/** The headers an error response carries besides X-Request-Id. */
const ERROR_HEADERS: Partial<Record<ErrorStatus, Record<string, HeaderObject>>> = {
  401: {
    'WWW-Authenticate': {
      description: 'The scheme to authenticate with',
      required: true,
      schema: { type: 'string', pattern: '^Bearer', example: 'Bearer' },
    },
  },
  408: { Connection: CONNECTION_CLOSE },
  409: { 'Retry-After': RETRY_AFTER },
  429: { 'Retry-After': RETRY_AFTER },
  431: { Connection: CONNECTION_CLOSE },
  503: { 'Retry-After': RETRY_AFTER },
};

/** Every response's X-Request-Id (app.setup.ts). */
export const REQUEST_ID_HEADER: HeaderObject = {
  description: `The caller’s X-Request-Id when it is 1–${MAX_REQUEST_ID_LENGTH} of [A-Za-z0-9._:-], else a new UUID; failures are logged under it`,
  required: true,
  schema: { type: 'string', pattern: REQUEST_ID.source },
};

/** The error response of `status` as an OpenAPI response object: always the JSON envelope. */
export function errorResponse(status: ErrorStatus, description = WHEN[status]): ResponseObject {
  return {
    description,
    headers: { ...ERROR_HEADERS[status] },
    content: { 'application/json': { schema: { $ref: getSchemaPath(ErrorEnvelope) } } },
  };
}

/** 409 CONFLICT of the account and key routes (docs/contract.md §12): no Retry-After, waiting does not help. */
export function ApiConflict(description: string) {
  return applyDecorators(
    ApiExtraModels(ErrorEnvelope),
    ApiResponse({ status: 409, ...errorResponse(409, `CONFLICT: ${description}`), headers: {} }),
  );
}

/** 429 RATE_LIMITED of a route with a limit of its own besides the rate per key (`reason`), with Retry-After. */
export function ApiRateLimited(reason: string) {
  return applyDecorators(
    ApiExtraModels(ErrorEnvelope),
    ApiResponse({
      status: 429,
      ...errorResponse(429, `RATE_LIMITED: over the rate per key, or ${reason}; retry after Retry-After seconds`),
    }),
  );
}

/**
 * Error responses particular to a route. The ones every route has (400, 429, 500) and every
 * authenticated route has (401, 403, 503) are added to the whole document by openapi.ts.
 */
export function ApiErrors(...more: ErrorStatus[]) {
  return applyDecorators(
    ApiExtraModels(ErrorEnvelope),
    ...more.map((status) => ApiResponse({ status, ...errorResponse(status) })),
  );
}

/**
 * A read over many events (docs/contract.md §8, BoundedReads): 422 QUERY_TOO_EXPENSIVE past
 * QUERY_TIMEOUT_SECONDS, 429 beyond READS_PER_ACCOUNT (besides the rate per key). `more429` names
 * the route's own reasons for a 429 (the export's).
 */
export function ApiBoundedRead(more422 = '', more429 = '') {
  return applyDecorators(
    ApiExtraModels(ErrorEnvelope),
    ApiResponse({
      status: 422,
      ...errorResponse(
        422,
        `${more422}QUERY_TOO_EXPENSIVE: a statement ran longer than QUERY_TIMEOUT_SECONDS and was cancelled in the database; details.timeoutSeconds`,
      ),
    }),
    ApiResponse({
      status: 429,
      ...errorResponse(
        429,
        `RATE_LIMITED: over the rate per key, or the account already has READS_PER_ACCOUNT reads over its events (list, statistics, export) in flight${more429}; retry after Retry-After seconds`,
      ),
    }),
  );
}

/** `{ data: <model> }` with `status`. */
export function ApiData(
  model: Type<unknown>,
  status = 200,
  description = 'OK',
  headers: Record<string, HeaderObject> = {},
) {
  return apiDataOf(model, { $ref: getSchemaPath(model) }, status, description, headers);
}

/** `{ data: <one of models> }` with `status`: an answer whose shape depends on the request. */
export function ApiDataOneOf(models: readonly Type<unknown>[], status = 200, description = 'OK') {
  return applyDecorators(
    ApiExtraModels(...models),
    apiDataOf(models[0]!, { oneOf: models.map((m) => ({ $ref: getSchemaPath(m) })) }, status, description, {}),
  );
}

/** `{ data: <model>[] }` with `status`: every item, no pages. */
export function ApiDataList(
  model: Type<unknown>,
  status = 200,
  description = 'OK',
  headers: Record<string, HeaderObject> = {},
) {
  return apiDataOf(model, { type: 'array', items: { $ref: getSchemaPath(model) } }, status, description, headers);
}

function apiDataOf(
  model: Type<unknown>,
  data: SchemaObject | ReferenceObject,
  status: number,
  description: string,
  headers: Record<string, HeaderObject>,
) {
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status,
      description,
      headers,
      content: {
        'application/json': { schema: { type: 'object', required: ['data'], properties: { data } } },
      },
    }),
  );
}

/** `{ data: <model>[], nextCursor? }`: a page. */
export function ApiPage(model: Type<unknown>) {
  return applyDecorators(
    ApiExtraModels(model),
    ApiResponse({
      status: 200,
      description: 'A page; nextCursor is present when more items exist',
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['data'],
            properties: {
              data: { type: 'array', items: { $ref: getSchemaPath(model) } },
              nextCursor: { type: 'string', description: 'Pass as cursor, with the same filters, for the next page' },
            },
          },
        },
      },
    }),
  );
}

/** A 200 of `text/plain; charset=utf-8` (PlainTextInterceptor); failures stay JSON. */
export function ApiText(description: string) {
  return ApiResponse({
    status: 200,
    description,
    content: { 'text/plain': { schema: { type: 'string' } } },
  });
}
