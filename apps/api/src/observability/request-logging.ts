import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { pinoHttp } from 'pino-http';
import { routeTemplate } from '@app/common';
import { requestLoggers } from './request-context';

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

/** A request as this file reads it: what Express and the key guard put on it. */
type Answered = IncomingMessage & { route?: { path?: unknown }; user?: { accountId?: string }; ip?: string };

/**
 * One line per request, when its response ends (or its client leaves): reqId, method, route
 * template, status, durationMs, accountId once authenticated, and the client address (TRUST_PROXY
 * decides which). Never a header (but the request id), the path's ids, the query string or the body:
 * pino-http's request and response serializers are replaced by these fields. The request's
 * logger (a child with its reqId) is then the one every line logged while handling it goes to.
 */
export function requestLogging(logger: Logger): Middleware {
  const http = pinoHttp({
    logger,
    // assignRequestId (app.setup.ts) ran first: a sane X-Request-Id kept, anything else replaced.
    genReqId: (req) => req.headers['x-request-id'] as string,
    quietReqLogger: true,
    quietResLogger: true,
    wrapSerializers: false,
    serializers: { req: omitted, res: omitted },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
    customSuccessObject: (req, res, line: { responseTime: number }) => requestFields(req, res, line.responseTime),
    customErrorObject: (req, res, _error, line: { responseTime: number }) => requestFields(req, res, line.responseTime),
  });
  return (req, res, next) => http(req, res, () => requestLoggers.run(req.log, next));
}

function requestFields(req: Answered, res: ServerResponse, durationMs: number): Record<string, unknown> {
  return {
    method: req.method,
    route: routeTemplate(req),
    status: res.statusCode,
    durationMs,
    accountId: req.user?.accountId,
    clientAddress: req.ip,
    ...(res.writableFinished ? {} : { aborted: true }),
  };
}

function omitted(): undefined {
  return undefined;
}
