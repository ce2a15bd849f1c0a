import { ErrorCode } from './error-code';

export interface FieldError {
  field: string;
  message: string;
}

/** A domain error: the global filter turns it into the error envelope with statusOf(code). */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }

  static validation(fields: FieldError[], message = 'The request is not valid.'): AppError {
    return new AppError('VALIDATION_ERROR', message, { fields });
  }

  /** No key, an unknown one, or one revoked or expired: one answer for each (docs/contract.md §5). */
  static unauthorized(): AppError {
    return new AppError(
      'UNAUTHORIZED',
      'A valid API key is required: Authorization: Bearer <key>.',
      {},
      { 'WWW-Authenticate': 'Bearer' },
    );
  }

  static notFound(what: string): AppError {
    return new AppError('NOT_FOUND', `${what} was not found.`);
  }

  static unavailable(message: string, retryAfterSeconds = 1): AppError {
    return new AppError('SERVICE_UNAVAILABLE', message, {}, { 'Retry-After': String(retryAfterSeconds) });
  }
}
