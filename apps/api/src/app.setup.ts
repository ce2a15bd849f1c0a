import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { Application, NextFunction, raw, Request, Response } from 'express';
import { authenticateRequests, forAuthenticated, KeyAuthenticator } from '@app/auth';
import {
  AppError,
  EVENT_ID,
  MAX_BATCH_BODY_BYTES,
  MAX_BODY_BYTES,
  MAX_BODY_DEPTH,
  parseIJson,
  REQUEST_ID,
} from '@app/common';
import { serveOpenApi } from './openapi/openapi';

/**
 * What Nest's module system cannot express: the HTTP edge. Used by main.ts and by every e2e
 * test, so both run the same pipeline. The app must be created with `bodyParser: false`.
 * The key is resolved from the Authorization header first; the body is read and parsed only
 * for a request with a valid key (contract §8), and ApiKeyGuard refuses the others.
 */
export function configureApp(app: INestApplication): void {
  const express = app as NestExpressApplication;
  express.disable('x-powered-by');
  express.set('etag', false);
  express.set('query parser', 'simple');
  express.use(assignRequestId);
  express.use(noSniffNoStore);
  express.use(placeUndecodableSegments);
  constrainPathParams(express.getHttpAdapter().getInstance() as Application);
  express.use(authenticateRequests(app.get(KeyAuthenticator)));
  express.use(forAuthenticated(requireJsonBody));
  express.use(forAuthenticated(parseJsonBody)); // the JSON body parser
  serveOpenApi(app);
}

/** Every path parameter name the routes use (a malformed one is refused by name). */
const PATH_PARAMS = ['id', 'chainId'];
const UNDECODABLE = Symbol('undecodable path segment');
type RoutedRequest = Request & { [UNDECODABLE]?: string };

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
 * A path parameter that is not percent-encoded UTF-8 is a 400 naming it. And Express 5
 * (path-to-regexp 8) has no inline patterns such as `:id(evt_…)`: a route's `:id` matches an
 * event id only, anything else goes on to the next route. So the literal GET /v1/events/export is
 * never taken for GET /v1/events/:id, whatever order the modules are imported in, and a malformed
 * id is the same 404 as an unknown route.
 */
function constrainPathParams(app: Application): void {
  app.param(PATH_PARAMS, (req: RoutedRequest, _res: Response, next: NextFunction, value: unknown, name: string) => {
    if (value !== req[UNDECODABLE]) return next();
    next(AppError.validation([{ field: name, message: `${name} is not valid percent-encoded UTF-8` }]));
  });
  app.param('id', (_req: Request, _res: Response, next: NextFunction, id: unknown) =>
    next(typeof id === 'string' && EVENT_ID.test(id) ? undefined : 'route'),
  );
}

/** Every request gets an id (the caller's X-Request-Id when it is sane), echoed back and logged on failure. */
function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  req.headers['x-request-id'] = id;
  res.setHeader('X-Request-Id', id);
  next();
}

/** Contract §8: every answer, errors and unknown routes included, is never sniffed nor cached. */
function noSniffNoStore(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'no-store');
  next();
}

/** A request that carries a body must say it is JSON (415 otherwise). */
function requireJsonBody(req: Request, _res: Response, next: NextFunction): void {
  const hasBody = req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0;
  if (hasBody && !req.is('application/json')) {
    next(new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be JSON (Content-Type: application/json).'));
    return;
  }
  next();
}

/**
 * The routes whose body may be larger than MAX_BODY_BYTES, by method and path: the body is read
 * before Nest routes the request, so the limit cannot come from the handler.
 */
const BODY_LIMITS: ReadonlyMap<string, number> = new Map([['POST /v1/events/batch', MAX_BATCH_BODY_BYTES]]);

/** The body limit of `req`'s route; paths as Express routes them (case-insensitive, a trailing slash allowed). */
export function bodyLimitOf(req: Request): number {
  const path = req.path.toLowerCase().replace(/\/+$/, '');
  return BODY_LIMITS.get(`${req.method} ${path}`) ?? MAX_BODY_BYTES;
}

/** body-parser's raw reader (limit, inflation), one per limit. */
const readers = new Map<number, ReturnType<typeof raw>>();
function readerFor(limit: number): ReturnType<typeof raw> {
  let reader = readers.get(limit);
  if (!reader) readers.set(limit, (reader = raw({ limit, type: () => true })));
  return reader;
}
const UTF8 = new TextDecoder('utf-8', { fatal: true });
const CHARSET = /;\s*charset\s*=\s*"?([^";\s]*)/i;

/**
 * Reads the body (body-parser: limit, inflation) and parses it as I-JSON (contract §8): UTF-8 only,
 * decoded without replacing anything, then `parseIJson` (duplicates, `__proto__`, depth).
 */
export function parseJsonBody(req: Request, res: Response, next: NextFunction): void {
  const charset = CHARSET.exec(req.headers['content-type'] ?? '')?.[1]?.toLowerCase();
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    next(bodyError({ type: 'charset.unsupported' }, MAX_BODY_BYTES));
    return;
  }
  const limit = bodyLimitOf(req);
  readerFor(limit)(req, res, (error?: unknown) => {
    if (error !== undefined) return next(bodyError(error, limit));
    if (!Buffer.isBuffer(req.body)) return next();
    try {
      req.body = req.body.length === 0 ? undefined : parseIJson(decodeUtf8(req.body), MAX_BODY_DEPTH);
    } catch (e) {
      return next(e);
    }
    next();
  });
}

function decodeUtf8(bytes: Buffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw AppError.validation(
      [{ field: 'body', message: 'body is not valid UTF-8' }],
      'The request body is not valid UTF-8.',
    );
  }
}

function bodyError(error: unknown, limit: number): AppError {
  switch ((error as { type?: unknown }).type) {
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${limit} bytes.`, {
        limitBytes: limit,
      });
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new AppError('UNSUPPORTED_MEDIA_TYPE', 'The request body must be UTF-8 encoded JSON.');
    default:
      return AppError.validation(
        [{ field: 'body', message: 'body is not valid JSON' }],
        'The request body is not valid JSON.',
      );
  }
}
