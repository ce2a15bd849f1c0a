import type { Request } from 'express';
import { AppError, FieldError, unstorableInText } from '@app/common';

/** Where constrainPathParams (app.setup.ts) leaves what is wrong with a path parameter: not percent-encoded UTF-8, or U+0000. */
export const MALFORMED_PATH_PARAM = Symbol('malformed path parameter');
export type PathParamRequest = Request & { [MALFORMED_PATH_PARAM]?: FieldError };

/** What is wrong with path parameter `name` whose segment decoded to `value` (null: it could not be decoded), or null. */
export function pathParamProblem(name: string, value: string | null): FieldError | null {
  if (value === null) return { field: name, message: `${name} is not valid percent-encoded UTF-8` };
  const unstorable = unstorableInText(value);
  return unstorable === null ? null : { field: name, message: `${name} must not contain ${unstorable}` };
}

/**
 * Refuses a request whose path parameter could not be decoded or holds U+0000, with a 400 naming
 * it. A step of RequestGuards after authentication (docs/contract.md §8: without a valid key the
 * answer is 401 whatever else is wrong with the request), so routing only marks such a request
 * and lets it through.
 */
export function refuseMalformedPathParam(req: PathParamRequest): void {
  const problem = req[MALFORMED_PATH_PARAM];
  if (problem !== undefined) throw AppError.validation([problem]);
}
