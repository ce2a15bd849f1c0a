import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from 'pino';
import { Metrics, requestIdOf, routeTemplate } from '@app/common';

type Middleware = (req: Request, res: Response, next: NextFunction) => void;

const STARTED = Symbol('request started');
/** A response as this file reads it: when it started, and what Express and the key guard put on its request. */
type Answered = Response & {
  [STARTED]: number;
  req: Request & { user?: { accountId?: string } };
};

/**
 * What each request leaves behind when its response ends (or its client leaves), from one shared
 * listener (no closure or child logger per request):
 * - with `logger`, one line: reqId, method, route template, status, durationMs, accountId once
 *   authenticated, and the client address (TRUST_PROXY decides which). Never a header (but the
 *   request id), the path's ids, the query string or the body: the line is built from these fields alone;
 * - with `metrics`, http_requests_total and http_request_duration_seconds.
 * The line's level is its status's (levelOf): `error` is kept for what someone must look at.
 *
 * No async context is entered per request: on Node 20 one AsyncLocalStorage in use makes every
 * promise of the process pay a hook, which cost single appends about 10 % (docs/performance.md).
 * A line logged while handling a request names it by passing `reqId: requestIdOf(req)` itself.
 */
export function observeRequests(
  logger: Logger | null,
  metrics: Metrics | null,
  stopping: () => boolean = () => false,
): Middleware {
  function answered(this: Answered): void {
    const req = this.req;
    const route = routeTemplate(req);
    const milliseconds = performance.now() - this[STARTED];
    metrics?.requestAnswered(req.method, route, this.statusCode, milliseconds / 1000);
    if (!logger) return;
    const failed = this.statusCode >= 500;
    logger[levelOf(this.statusCode, stopping)](
      {
        reqId: requestIdOf(req),
        method: req.method,
        route,
        status: this.statusCode,
        durationMs: Math.round(milliseconds),
        accountId: req.user?.accountId,
        clientAddress: req.ip,
        ...(this.writableFinished ? {} : { aborted: true }),
      },
      failed ? 'request failed' : 'request completed',
    );
  }
  return (_req, res, next) => {
    (res as Answered)[STARTED] = performance.now();
    res.on('close', answered);
    next();
  };
}

/**
 * A 500 (any 5xx but 503) is an `error`: something failed that should not have. A 503 is the
 * service saying "not now" (the database is away, the append queue is full: `warn`, their cause is
 * logged where it is found), and while the service stops it is what a stop answers by design
 * (readiness, docs/contract.md §11): `info`, so a graceful stop leaves no error line.
 */
export function levelOf(status: number, stopping: () => boolean): 'info' | 'warn' | 'error' {
  if (status < 500) return 'info';
  if (status !== 503) return 'error';
  return stopping() ? 'info' : 'warn';
}
