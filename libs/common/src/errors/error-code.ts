/** Every error code of docs/contract.md §5. */
export type ErrorCode =
  | 'VALIDATION_ERROR'
  | 'UNAUTHORIZED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'IDEMPOTENCY_IN_PROGRESS'
  | 'CONFLICT'
  | 'PRUNED'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'EXPORT_LIMIT_EXCEEDED'
  | 'IDEMPOTENCY_KEY_REUSED'
  | 'QUERY_TOO_EXPENSIVE'
  | 'NOT_ERASABLE'
  | 'NOTHING_MATCHED'
  | 'RATE_LIMITED'
  | 'REQUEST_TIMEOUT'
  | 'REQUEST_HEADER_FIELDS_TOO_LARGE'
  | 'SERVICE_UNAVAILABLE'
  | 'INTERNAL_ERROR';

export function statusOf(code: ErrorCode): number {
  switch (code) {
    case 'VALIDATION_ERROR':
      return 400;
    case 'UNAUTHORIZED':
      return 401;
    case 'FORBIDDEN':
      return 403;
    case 'NOT_FOUND':
      return 404;
    case 'METHOD_NOT_ALLOWED':
      return 405;
    case 'IDEMPOTENCY_IN_PROGRESS':
    case 'CONFLICT':
      return 409;
    case 'PRUNED':
      return 410;
    case 'PAYLOAD_TOO_LARGE':
      return 413;
    case 'UNSUPPORTED_MEDIA_TYPE':
      return 415;
    case 'EXPORT_LIMIT_EXCEEDED':
    case 'IDEMPOTENCY_KEY_REUSED':
    case 'QUERY_TOO_EXPENSIVE':
    case 'NOT_ERASABLE':
    case 'NOTHING_MATCHED':
      return 422;
    case 'REQUEST_TIMEOUT':
      return 408;
    case 'RATE_LIMITED':
      return 429;
    case 'REQUEST_HEADER_FIELDS_TOO_LARGE':
      return 431;
    case 'SERVICE_UNAVAILABLE':
      return 503;
    case 'INTERNAL_ERROR':
      return 500;
  }
}
