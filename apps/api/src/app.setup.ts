import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { json, NextFunction, Request, Response } from 'express';
import { authenticateRequests, forAuthenticated, KeyAuthenticator } from '@app/auth';
import { AppError, REQUEST_ID } from '@app/common';
import { serveOpenApi } from './openapi/openapi';

export const MAX_BODY_BYTES = 64 * 1024;

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
  express.use(authenticateRequests(app.get(KeyAuthenticator)));
  express.use(forAuthenticated(requireJsonBody));
  express.use(forAuthenticated(parseJsonBody)); // the JSON body parser
  serveOpenApi(app);
}

/** Every request gets an id (the caller's X-Request-Id when it is sane), echoed back and logged on failure. */
function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  req.headers['x-request-id'] = id;
  res.setHeader('X-Request-Id', id);
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

const jsonParser = json({ limit: MAX_BODY_BYTES, strict: true, type: () => true });

/** body-parser, with its failures turned into the contract's errors. */
function parseJsonBody(req: Request, res: Response, next: NextFunction): void {
  jsonParser(req, res, (error?: unknown) => next(error === undefined ? undefined : bodyError(error)));
}

function bodyError(error: unknown): AppError {
  switch ((error as { type?: unknown }).type) {
    case 'entity.too.large':
      return new AppError('PAYLOAD_TOO_LARGE', `The request body is larger than ${MAX_BODY_BYTES} bytes.`, {
        limitBytes: MAX_BODY_BYTES,
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
