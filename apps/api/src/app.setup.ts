import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Application, NextFunction, Request, Response } from 'express';
import { ApiKeyGuard } from '@app/auth';
import { EVENT_ID, REQUEST_ID } from '@app/common';
import { answerClientErrors } from './common/client-errors';
import { JsonReplyAdapter } from './common/json-reply.adapter';
import { configureObservability } from './observability/observability';
import { MALFORMED_PATH_PARAM, PathParamRequest, pathParamProblem } from './common/path-params';
import { serveOpenApi } from './openapi/openapi';
import { answerUnmatched, ParamRule } from './common/unmatched-requests';

/**
 * What Nest's module system cannot express: the HTTP edge. Used by main.ts and by every e2e
 * test, so both run the same pipeline. The app must be created with `bodyParser: false`: no
 * middleware reads the body; JsonBodyGuard does, after ApiKeyGuard (docs/contract.md §8). And on a
 * JsonReplyAdapter, whose JSON responses rely on the settings made here (no ETag), and which runs
 * answerUnmatched after every route (401 under /v1/ first, then 405 or 404). And requests the HTTP
 * parser refuses (headers over 16 KiB, a bad request line) get the error envelope too.
 */
export function configureApp(app: INestApplication): void {
  if (!(app.getHttpAdapter() instanceof JsonReplyAdapter)) {
    throw new Error('The app must be created on a JsonReplyAdapter (see main.ts)');
  }
  const express = app as NestExpressApplication;
  answerClientErrors(express.getHttpServer());
  express.disable('x-powered-by');
  express.set('etag', false);
  express.set('query parser', 'simple');
  express.use(assignRequestId);
  configureObservability(app);
  express.use(noSniffNoStore);
  express.use(placeUndecodableSegments);
  const instance = express.getHttpAdapter().getInstance() as Application;
  constrainPathParams(instance);
  serveOpenApi(app);
  (app.getHttpAdapter() as JsonReplyAdapter).answerUnmatchedWith(
    answerUnmatched(instance, app.get(ApiKeyGuard), { id: onlyEventIds }),
  );
}

/** Every path parameter name the routes use (a malformed one is refused by name). */
const PATH_PARAMS = ['id', 'chainId', 'accountId', 'keyId', 'destinationId', 'action', 'n'];
const UNDECODABLE = Symbol('undecodable path segment');
type RoutedRequest = PathParamRequest & { [UNDECODABLE]?: string };

/**
 * Express fails on a path segment it cannot percent-decode before it knows which parameter the
 * segment is, so its 400 could not name it. Such a segment is routed as a one-off placeholder
 * instead, and refused by constrainPathParams with the parameter's name.
 */
function placeUndecodableSegments(req: RoutedRequest, _res: Response, next: NextFunction): void {
  const queryAt = req.url.indexOf('?');
  const path = queryAt === -1 ? req.url : req.url.slice(0, queryAt);
  if (!path.includes('%')) return next();
  const placeholder = `undecodable-${randomUUID()}`;
  const segments = path.split('/').map((segment) => (isDecodable(segment) ? segment : placeholder));
  if (segments.includes(placeholder)) {
    req[UNDECODABLE] = placeholder;
    req.url = segments.join('/') + (queryAt === -1 ? '' : req.url.slice(queryAt));
  }
  next();
}

function isDecodable(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

/**
 * A path parameter that is not percent-encoded UTF-8, or that decodes to U+0000, is a 400 naming
 * it, given by RequestGuards once the request is authenticated (refuseMalformedPathParam): here
 * it is only marked. And Express 5 (path-to-regexp 8) has no inline patterns such as
 * `:id(evt_…)`: a route's `:id` matches an
 * event id only, anything else goes on to the next route. So the literal GET /v1/events/export is
 * never taken for GET /v1/events/:id, whatever order the modules are imported in, and a malformed
 * id is the same 404 as an unknown route, after the same 401 without a key (answerUnmatched, which
 * matches paths with this same rule to find a path's methods for a 405).
 */
function constrainPathParams(app: Application): void {
  app.param(PATH_PARAMS, (req: RoutedRequest, _res: Response, next: NextFunction, value: unknown, name: string) => {
    const problem = pathParamProblem(name, value === req[UNDECODABLE] ? null : String(value));
    if (problem !== null) req[MALFORMED_PATH_PARAM] ??= problem;
    next();
  });
  app.param('id', onlyEventIds);
}

/** `:id` is an event id (or an undecodable segment, refused later by name); anything else takes the next route. */
const onlyEventIds: ParamRule = (req: RoutedRequest, _res, next, id) => {
  if (id === req[UNDECODABLE] || (typeof id === 'string' && EVENT_ID.test(id))) return next();
  req.route = undefined; // this route did not match after all (logs and metrics say `unmatched` unless another does)
  next('route');
};

/** Every request gets an id (the caller's X-Request-Id when it is sane), echoed back and logged on failure. */
function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  req.headers['x-request-id'] = id;
  res.setHeader('X-Request-Id', id);
  next();
}

/** docs/contract.md §8: every answer, errors and unknown routes included, is never sniffed nor cached. */
function noSniffNoStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-store');
  next();
}
