/**
 * The Content-Security-Policy of every page the service serves (the console, /docs): this origin
 * only, no inline script, nothing from another origin, no framing. `styleSources` are what a page
 * adds to `style-src 'self'` (/docs: the hashes of its own inline styles).
 */
export function sameOriginCsp(styleSources: readonly string[] = []): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    ['style-src', "'self'", ...styleSources].join(' '),
    "img-src 'self' data:",
    "connect-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
