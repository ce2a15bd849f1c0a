import type { Request } from 'express';
import { AppError, FieldError, unstorableInText } from '@app/common';

/**
 * Refuses a query string with a parameter (name or value) that is not percent-encoded UTF-8 or
 * that decodes to U+0000, with a 400 naming the parameter (docs/contract.md §8: one check for
 * every string). Express's parser would turn the first into U+FFFD (a filter silently altered)
 * and pass the second on to PostgreSQL (a 500). Percent-decoding never yields a lone surrogate
 * (UTF-8 has no encoding for one), and Node refuses a request line with raw bytes beyond ASCII
 * (a 400 before any route), so only a `%` can hide anything. A step of RequestGuards, after
 * authentication, like a malformed path parameter. It also refuses the names of Object.prototype's
 * members (PROTOTYPE_NAMES) as unknown parameters.
 */
export function refuseMalformedQuery(req: Request): void {
  const at = req.url.indexOf('?');
  if (at === -1) return;
  const fields: FieldError[] = [];
  for (const pair of req.url.slice(at + 1).split('&')) {
    const equals = pair.indexOf('=');
    const rawName = equals === -1 ? pair : pair.slice(0, equals);
    const name = decoded(rawName);
    const value = equals === -1 ? '' : decoded(pair.slice(equals + 1));
    const field = name ?? rawName;
    if (name !== null && PROTOTYPE_NAMES.has(name.replace(/\[.*$/, ''))) {
      fields.push({ field, message: `unknown field '${field}'` });
      continue;
    }
    if (name === null || value === null) {
      fields.push({ field, message: `${field} is not valid percent-encoded UTF-8` });
      continue;
    }
    const unstorable = unstorableInText(name) ?? unstorableInText(value);
    if (unstorable !== null) fields.push({ field, message: `${field} must not contain ${unstorable}` });
  }
  if (fields.length > 0) throw AppError.validation(fields);
}

/**
 * Names the query parser and the DTOs' classes take for their own (`constructor`, `__proto__`,
 * `toString`…): no route has such a parameter, and the DTO check would not see one (it is a member of
 * every object), so it is refused here as unknown, like any other name a route does not take (§4).
 */
const PROTOTYPE_NAMES = new Set([...Object.getOwnPropertyNames(Object.prototype), '__proto__']);

/** A query string component as Express's parser reads it (`+` is a space), or null when it is not percent-encoded UTF-8. */
function decoded(component: string): string | null {
  try {
    return decodeURIComponent(component.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}
