import { randomUUID } from 'node:crypto';
import { INestApplication } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import { NextFunction, Request, Response } from 'express';
import { serveOpenApi } from './openapi/openapi';

/**
 * What Nest's module system cannot express: the HTTP edge. Used by main.ts and by every e2e
 * test, so both run the same pipeline. The app must be created with `bodyParser: false`: no
 * middleware reads the body; JsonBodyInterceptor does, after ApiKeyGuard (contract §8).
 */
export function configureApp(app: INestApplication): void {
  const express = app as NestExpressApplication;
  express.disable('x-powered-by');
  express.set('etag', false);
  express.set('query parser', 'simple');
  express.use(assignRequestId);
  serveOpenApi(app);
}

const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Every request gets an id (the caller's X-Request-Id when it is sane), echoed back and logged on failure. */
function assignRequestId(req: Request, res: Response, next: NextFunction): void {
  const given = req.headers['x-request-id'];
  const id = typeof given === 'string' && CLIENT_REQUEST_ID.test(given) ? given : randomUUID();
  req.headers['x-request-id'] = id;
  res.setHeader('X-Request-Id', id);
  next();
}
