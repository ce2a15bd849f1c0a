import type { components } from './api-schema';

/** The error envelope's codes (docs/contract.md §5), and the client's own for a request that got no answer. */
export type ErrorCode = components['schemas']['ErrorBody']['code'] | 'NETWORK_ERROR' | 'BAD_RESPONSE';

/** One bad member of a request, as `details.fields` names it (`events[3].actor` in a batch, docs/contract.md §9). */
export interface FieldError {
  field: string;
  message: string;
}

/**
 * A call the service refused, or that never got an answer (`status` 0, `code` NETWORK_ERROR).
 * `code`, `message` and `details` are the envelope's (docs/contract.md §5); `requestId` is the
 * answer's X-Request-Id, under which the service logged it.
 */
export class AuditTrailError extends Error {
  override readonly name = 'AuditTrailError';
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly requestId: string | null = null,
    /** Seconds, from Retry-After (429, 503), when the answer named them. */
    readonly retryAfter: number | null = null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** `details.fields` when the service listed bad members (400 VALIDATION_ERROR). */
  get fields(): FieldError[] {
    const fields = this.details.fields;
    return Array.isArray(fields) ? fields.filter(isFieldError) : [];
  }
}

function isFieldError(value: unknown): value is FieldError {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Record<string, unknown>).field === 'string' &&
    typeof (value as Record<string, unknown>).message === 'string'
  );
}

/** What verifyReceipt found wrong: the first check that failed. */
export type VerificationFailure = 'hash' | 'inclusion' | 'signature' | 'witnesses' | 'consistency';

/** A receipt that does not check out (docs/contract.md §20); `reason` names the check that failed. */
export class AuditTrailVerificationError extends Error {
  override readonly name = 'AuditTrailVerificationError';
  constructor(
    readonly reason: VerificationFailure,
    message: string,
  ) {
    super(`${reason}: ${message}`);
  }
}
