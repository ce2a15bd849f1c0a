import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { AppError } from './app-error';
import { ErrorCode, statusOf } from './error-code';
import { routeTemplate } from '../observability/route-template';
import { requestIdOf } from '../observability/request-id';

/**
 * Socket errors, and SQLSTATEs of a server that is away, shutting down or refusing sessions, or
 * that refuses writes (25006 read_only_sql_transaction: the service never declares its write
 * transactions read-only, so the server is a standby: during a failover, HAProxy may route to the
 * new leader a moment before its promotion ends, or still to the demoted one; docs/contract.md §21).
 */
const DB_UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  '57P01',
  '57P02',
  '57P03',
  '53300',
  '3D000',
  '25006',
]);

/**
 * The only place failures become HTTP responses: every error leaves as
 * `{ error: { code, message, details } }`, and nothing internal (stack, SQL) leaves at all.
 */
@Catch()
export class GlobalExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const response = http.getResponse<Response>();
    const request = http.getRequest<Request>();
    const error = this.toAppError(exception, request);
    const status = statusOf(error.code);
    const requestId = requestIdOf(request);
    if (sqlStateOf(exception) === READ_ONLY_REFUSED)
      // 503 (a standby, mid-failover), but also what a write inside a READ ONLY transaction would give
      // (a bug): logged, so that a 503 that never ends is told from a failover.
      this.logger.warn({
        msg: `${request.method} ${routeTemplate(request)}: a write refused as read-only (25006), answered 503`,
        reqId: requestId,
      });
    if (status >= 500 && error.code !== 'SERVICE_UNAVAILABLE') {
      // With the request's id; the route template, never the URL (ids, query string).
      const route = routeTemplate(request);
      this.logger.error({
        msg: `${request.method} ${route} failed`,
        reqId: requestId,
        method: request.method,
        route,
        err: exception,
      });
    }
    if (response.headersSent) {
      response.destroy();
      return;
    }
    for (const [name, value] of Object.entries(error.headers)) response.setHeader(name, value);
    // A 500 names the request id under which it was logged, so an operator can find it.
    const details =
      error.code === 'INTERNAL_ERROR' && requestId !== undefined ? { ...error.details, requestId } : error.details;
    response.status(status).json({ error: { code: error.code, message: error.message, details } });
  }

  private toAppError(exception: unknown, request: Request): AppError {
    if (exception instanceof AppError) return exception;
    if (exception instanceof HttpException) return this.fromHttpException(exception, request);
    if (isDatabaseUnreachable(exception)) {
      return AppError.unavailable('The database is unavailable. Nothing was written; retry later.');
    }
    return new AppError('INTERNAL_ERROR', 'An internal error occurred.');
  }

  private fromHttpException(exception: HttpException, request: Request): AppError {
    const status = exception.getStatus();
    switch (status) {
      case 404:
        // originalUrl: the path as sent (app.setup.ts may route an undecodable segment as a placeholder).
        return new AppError('NOT_FOUND', `No route for ${request.method} ${request.originalUrl.split('?')[0]}.`);
      case 413:
        return new AppError('PAYLOAD_TOO_LARGE', 'The request body is too large.');
      default: {
        const code = codeForStatus(status);
        return new AppError(code, code === 'INTERNAL_ERROR' ? 'An internal error occurred.' : exception.message);
      }
    }
  }
}

function codeForStatus(status: number): ErrorCode {
  const byStatus: Record<number, ErrorCode> = {
    400: 'VALIDATION_ERROR',
    401: 'UNAUTHORIZED',
    403: 'FORBIDDEN',
    404: 'NOT_FOUND',
    405: 'METHOD_NOT_ALLOWED',
    409: 'IDEMPOTENCY_IN_PROGRESS',
    410: 'PRUNED',
    413: 'PAYLOAD_TOO_LARGE',
    415: 'UNSUPPORTED_MEDIA_TYPE',
    429: 'RATE_LIMITED',
    503: 'SERVICE_UNAVAILABLE',
  };
  return byStatus[status] ?? 'INTERNAL_ERROR';
}

/** SQLSTATE 25006 read_only_sql_transaction. */
const READ_ONLY_REFUSED = '25006';

/** The error's code (a SQLSTATE or a socket error's), or its driver error's. */
function sqlStateOf(e: unknown): unknown {
  return (
    (e as { code?: unknown; driverError?: { code?: unknown } } | null)?.code ??
    (e as { driverError?: { code?: unknown } } | null)?.driverError?.code
  );
}

function isDatabaseUnreachable(e: unknown): boolean {
  const code = sqlStateOf(e);
  // Class 08: connection exceptions (includes "database does not allow connections", 08006 etc.).
  if (typeof code === 'string' && (DB_UNREACHABLE.has(code) || code.startsWith('08'))) return true;
  const message = e instanceof Error ? e.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|not currently accepting connections/i.test(
    message,
  );
}
