import { createHash } from 'node:crypto';
import { sameOriginCsp } from '../common/content-security-policy';

/**
 * The Content-Security-Policy of /docs (Swagger UI, served by @nestjs/swagger from swagger-ui-dist),
 * as strict as the console's (docs/contract.md §15): this origin only, no other (the document is inlined
 * in swagger-ui-init.js, which is a file like the bundle), no framing. Its page has no inline
 * script, only inline style: two <style> elements and one style attribute, each allowed by the
 * hash of its exact text (a style attribute needs 'unsafe-hashes' for its hash to count), so no
 * other inline style runs either. Icons are data: URLs in swagger-ui.css.
 */
export function docsCsp(html: string): string {
  const elements = [...html.matchAll(/<style[^>]*>([\s\S]*?)<\/style>/gi)].map(([, text]) => text!);
  const attributes = [...html.matchAll(/\sstyle="([^"]*)"/gi)].map(([, text]) => text!);
  const hashes = [...new Set([...elements, ...attributes].map(sha256Source))];
  return sameOriginCsp([...(attributes.length > 0 ? ["'unsafe-hashes'"] : []), ...hashes]);
}

/** A CSP hash source: `'sha256-<base64 of the SHA-256 of the UTF-8 text>'`. */
function sha256Source(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}
