import { performance } from 'node:perf_hooks';
import type { NextFunction, Request, Response } from 'express';
import { Metrics, routeTemplate } from '@app/common';

const STARTED = Symbol('request started');
type Timed = Response & { [STARTED]: number };

/**
 * http_requests_total and http_request_duration_seconds, counted when each response ends (or its
 * client leaves). One shared listener, no closure per request.
 */
export function requestMetrics(metrics: Metrics): (req: Request, res: Response, next: NextFunction) => void {
  function answered(this: Timed): void {
    const seconds = (performance.now() - this[STARTED]) / 1000;
    metrics.requestAnswered(this.req.method, routeTemplate(this.req), this.statusCode, seconds);
  }
  return (_req, res, next) => {
    (res as Timed)[STARTED] = performance.now();
    res.on('close', answered);
    next();
  };
}
