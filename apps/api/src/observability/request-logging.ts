import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { routeTemplate } from '@app/common';
import { requestIds } from './request-context';

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

const STARTED = Symbol('request started');
/** A response as this file reads it: when it started, and what Express and the key guard put on its request. */
type Answered = Response & {
  [STARTED]: number;
  req: Request & { user?: { accountId?: string } };
};

/**
 * One line per request, when its response ends (or its client leaves): reqId, method, route
 * template, status, durationMs, accountId once authenticated, and the client address (TRUST_PROXY
 * decides which). Never a header (but the request id), the path's ids, the query string or the body:
 * the line is built from these fields alone. One shared listener, no logger or closure per request;
 * the request id is what lines logged while handling it carry (requestIds, PinoNestLogger).
 */
export function requestLogging(logger: Logger): Middleware {
  function answered(this: Answered): void {
    const req = this.req;
    const failed = this.statusCode >= 500;
    logger[failed ? 'error' : 'info'](
      {
        reqId: req.headers['x-request-id'],
        method: req.method,
        route: routeTemplate(req),
        status: this.statusCode,
        durationMs: Math.round(performance.now() - this[STARTED]),
        accountId: req.user?.accountId,
        clientAddress: req.ip,
        ...(this.writableFinished ? {} : { aborted: true }),
      },
      failed ? 'request failed' : 'request completed',
    );
  }
  return (req, res, next) => {
    (res as Answered)[STARTED] = performance.now();
    res.on('close', answered);
    // assignRequestId (app.setup.ts) ran first: a sane X-Request-Id kept, anything else replaced.
    requestIds.run(req.headers['x-request-id'] as string, next);
  };
}
