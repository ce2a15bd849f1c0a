/** What a request needs for routeTemplate: Express's matched route, if any. */
interface Routed {
  route?: { path?: unknown };
}

/**
 * The route template a request matched (`/v1/events/:id`), or `unmatched`: what metrics labels
 * and log lines name instead of the path, which carries ids (and would be an unbounded label).
 * app.setup.ts forgets the route when a path parameter turns it down, so a refused `:id` is unmatched.
 */
export function routeTemplate(req: Routed): string {
  const path = req.route?.path;
  return typeof path === 'string' ? path : 'unmatched';
}
