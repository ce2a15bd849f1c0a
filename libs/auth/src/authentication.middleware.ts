import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { Authentication, KeyAuthenticator } from './key-authenticator';

/** Each request's authentication, out of reach of anything the client sends (headers, query, body). */
const authentications = new WeakMap<object, Authentication>();

/**
 * Express middleware registered before any body parser: resolves the request's key from its
 * Authorization header and records the outcome. It refuses nothing itself: ApiKeyGuard decides,
 * since only it knows whether the route is @Public() and which scope it needs.
 */
export function authenticateRequests(authenticator: KeyAuthenticator): RequestHandler {
  return (req: Request, _res: Response, next: NextFunction) => {
    authenticator.authenticate(req.headers.authorization, req.ip ?? 'unknown').then((authentication) => {
      authentications.set(req, authentication);
      next();
    }, next);
  };
}

/** The outcome recorded for this request; a request the middleware never saw has no key. */
export function authenticationOf(req: object): Authentication {
  return authentications.get(req) ?? { outcome: 'missing' };
}

/**
 * Runs `handler` (a body parser) only for requests with a valid key: without one, the body is
 * never read, so the answer is the guard's 401 (or 429, 503) whatever the body (contract §8).
 */
export function forAuthenticated(handler: RequestHandler): RequestHandler {
  return (req: Request, res: Response, next: NextFunction) => {
    if (authenticationOf(req).outcome === 'authenticated') handler(req, res, next);
    else next();
  };
}
