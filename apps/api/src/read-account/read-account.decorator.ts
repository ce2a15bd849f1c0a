import { applyDecorators, createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import { ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { Request } from 'express';
import { ACCOUNT_ID } from '@app/common';
import { errorResponse } from '../openapi/openapi-responses';

/** The query parameter that names the account an operator reads (docs/contract.md §12). */
export const ACCOUNT_ID_PARAMETER = 'accountId';
/** Marks a handler that reads an account, for ReadAccountGuard. */
export const READS_ACCOUNT = 'audit:reads-account';
/** Where ReadAccountGuard leaves the account a request reads. */
export const READ_ACCOUNT = Symbol('the account this request reads');

export type AccountReadingRequest = Request & { [READ_ACCOUNT]?: string };

/** The account a request reads, once ReadAccountGuard has decided it (undefined on other routes). */
export const accountReadBy = (request: AccountReadingRequest): string | undefined => request[READ_ACCOUNT];

/** What @ReadAccount() declares of its handler: that it reads an account, and the parameter that names one. */
const markHandler: ParameterDecorator = (target, key) => {
  const descriptor = key === undefined ? undefined : Object.getOwnPropertyDescriptor(target, key);
  if (key === undefined || descriptor === undefined) throw new Error('@ReadAccount() is for a route handler');
  applyDecorators(
    SetMetadata(READS_ACCOUNT, true),
    ApiQuery({
      name: ACCOUNT_ID_PARAMETER,
      required: false,
      schema: { type: 'string', pattern: ACCOUNT_ID.source },
      description:
        'Operator keys only: read this account as its own key would, instead of the key’s own (any other key: 400). ' +
        'An unknown account is a 404. Recorded in that account’s _audit chain as operator.read, at most once an hour per key',
    }),
    ApiResponse({ status: 404, ...errorResponse(404, 'NOT_FOUND: accountId names no account (an operator’s read)') }),
  )(target, key, descriptor);
};

/**
 * The account this request reads (docs/contract.md §12): the key's own, or, for an operator key, the one
 * its `accountId` query parameter names. On a handler's parameter it is the one mechanism of
 * operator reads: it marks the handler (ReadAccountGuard then resolves the account, 400 or 404,
 * records the read in that account's `_audit`, and takes `accountId` out of the query the
 * handler's DTO sees, so no other route accepts it), documents the parameter and its 404 in the
 * OpenAPI description, and hands the handler the account it reads. Its services take that account,
 * never the caller's: tenancy (404 for another account's ids), cursors and per-account limits
 * follow the account read.
 */
export const ReadAccount = createParamDecorator(
  (_: unknown, ctx: ExecutionContext): string => {
    const account = accountReadBy(ctx.switchToHttp().getRequest<AccountReadingRequest>());
    if (account === undefined) throw new Error('@ReadAccount() without ReadAccountGuard: is it in RequestGuards?');
    return account;
  },
  [markHandler],
);
