import { Router } from 'express';
import type { Application, NextFunction, Request, RequestHandler, Response } from 'express';
import { ApiKeyGuard } from '@app/auth';
import { AppError, asError } from '@app/common';

/** A path parameter's rule as `app.param` takes it: `next()` to accept, `next('route')` to refuse. */
export type ParamRule = (req: Request, res: Response, next: NextFunction, value: unknown, name: string) => void;

/** What `router.listRoutes()` (router 2.3, Express 5's router) says of each registered path. */
interface ListedRoute {
  path: string | RegExp;
  methods?: string[];
}

/** Paths under which nothing is said about routes to a request without a valid key (docs/contract.md §8). */
const AUTHENTICATED_PATHS = /^\/v1(\/|$)/i;

const FOUND = Symbol('route templates the probe matched');
type Probed = Request & { [FOUND]?: { template: string; methods: readonly string[] }[] };

/**
 * What answers a request that no route took, run after every route and before Nest's 404
 * (JsonReplyAdapter.setNotFoundHandler). Under /v1/ the request is authenticated first, as a route
 * would do it: without a valid key the answer is 401, whatever the path (docs/contract.md §8), so no
 * answer tells an existing route from another. Then a path some route serves with other methods is
 * `405 METHOD_NOT_ALLOWED` with `Allow` (docs/contract.md §5); anything else goes on to the 404.
 *
 * Which methods a path has is asked of the routes Express holds (not of a list kept by hand),
 * through a router of its own that has one route per registered path and the app's path parameter
 * rules: a path matches here exactly when it would there, an `:id` that is no event id included.
 */
export function answerUnmatched(
  app: Application,
  guard: ApiKeyGuard,
  params: Record<string, ParamRule>,
): RequestHandler {
  let probe: Router | undefined; // made at the first such request: by then every route is registered
  return async (req: Probed, res: Response, next: NextFunction): Promise<void> => {
    if (AUTHENTICATED_PATHS.test(req.path)) await guard.authenticate(req, res);
    probe ??= probeOf((app.router as unknown as { listRoutes(): ListedRoute[] }).listRoutes(), params);
    const found = await matchedRoutes(probe, req, res);
    if (found.length === 0) return next();
    const allowed = [...new Set(found.flatMap(({ methods }) => methods))].sort();
    (req as { route?: unknown }).route = { path: found[0]!.template }; // logs and metrics name the template
    const path = req.originalUrl.split('?')[0];
    throw new AppError(
      'METHOD_NOT_ALLOWED',
      `${path} does not answer ${req.method}; its methods are ${allowed.join(', ')}.`,
      { allowedMethods: allowed },
      { Allow: allowed.join(', ') },
    );
  };
}

/** A router with a route for every registered path, each noting its template and methods on the request. */
function probeOf(routes: readonly ListedRoute[], params: Record<string, ParamRule>): Router {
  const probe = Router();
  for (const [name, rule] of Object.entries(params)) probe.param(name, rule);
  for (const { path, methods } of routes) {
    const served = (methods ?? []).filter((method) => method !== '*');
    if (served.length === 0) continue;
    probe.all(path, (req: Probed, _res, next) => {
      req[FOUND]?.push({ template: String(path), methods: served });
      next();
    });
  }
  return probe;
}

/** The registered paths `req` matches (with their methods); its route and params are as they were after. */
function matchedRoutes(
  probe: Router,
  req: Probed,
  res: Response,
): Promise<{ template: string; methods: readonly string[] }[]> {
  const found: { template: string; methods: readonly string[] }[] = [];
  const route: unknown = req.route;
  req[FOUND] = found;
  return new Promise((resolve, reject) => {
    probe(req, res, (error?: unknown) => {
      delete req[FOUND];
      (req as { route?: unknown }).route = route;
      if (error && error !== 'route' && error !== 'router') reject(asError(error));
      else resolve(found);
    });
  });
}
