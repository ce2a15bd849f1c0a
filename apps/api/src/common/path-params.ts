import type { Request } from 'express';
import { AppError } from '@app/common';

/** Where constrainPathParams (app.setup.ts) leaves the name of a path parameter that is not percent-encoded UTF-8. */
export const MALFORMED_PATH_PARAM = Symbol('malformed path parameter');
export type PathParamRequest = Request & { [MALFORMED_PATH_PARAM]?: string };

/**
 * Refuses a request whose path parameter could not be decoded, with a 400 naming it. A step of
 * RequestGuards after authentication (docs/contract.md §8: without a valid key the answer is 401 whatever
 * else is wrong with the request), so routing only marks such a request and lets it through.
 */
export function refuseMalformedPathParam(req: PathParamRequest): void {
  const name = req[MALFORMED_PATH_PARAM];
  if (name !== undefined) {
    throw AppError.validation([{ field: name, message: `${name} is not valid percent-encoded UTF-8` }]);
  }
}
