import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthenticatedKey, routeOf, seesEveryAccount } from '@app/auth';
import { ACCOUNT_ID, AppError } from '@app/common';
import { AccountsRepository } from '@app/database';
import { OperatorReadLog } from './operator-read-log';
import { ACCOUNT_ID_PARAMETER, AccountReadingRequest, READ_ACCOUNT, READS_ACCOUNT } from './read-account.decorator';

/**
 * A step of RequestGuards, after the key and its rate limit, before the account's read admission
 * (which then counts the read against the account read): on a handler with @ReadAccount(), decides
 * the account the request reads (docs/contract.md §12). Without `accountId`, the key's own. With it:
 * from a key without `operator`, 400 (admin and read keys read their own account only, even
 * naming it); not an account id, 400; no such account, 404; the operator's own account, that one;
 * another account, that one, once the read is on record in its `_audit` (OperatorReadLog). The
 * parameter is then taken out of the query, so the handler's DTO, which refuses unknown parameters,
 * never sees it; on every other route it stays, and is refused as unknown (400).
 */
@Injectable()
export class ReadAccountGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly accounts: AccountsRepository,
    private readonly log: OperatorReadLog,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    if (context.getType() !== 'http' || !this.reflector.get<boolean>(READS_ACCOUNT, context.getHandler())) return true;
    const request = context.switchToHttp().getRequest<AccountReadingRequest & { user?: AuthenticatedKey }>();
    const key = request.user;
    if (!key) throw new Error('@ReadAccount() on a route without a key');
    const named = takeAccountId(request);
    request[READ_ACCOUNT] = named === undefined ? key.accountId : await this.named(key, named, context);
    return true;
  }

  private async named(key: AuthenticatedKey, named: unknown, context: ExecutionContext): Promise<string> {
    if (!seesEveryAccount(key))
      throw refused('accountId may be named only by an operator key: this key reads its own account');
    if (typeof named !== 'string' || !ACCOUNT_ID.test(named))
      throw refused('accountId must be one account id (acc_ and a ULID)');
    if (named === key.accountId) return named;
    if (!(await this.accounts.findById(named))) throw AppError.notFound(`Account ${named}`);
    await this.log.record(key.keyId, named, routeOf(context.getClass(), context.getHandler()));
    return named;
  }
}

const refused = (message: string): AppError => AppError.validation([{ field: ACCOUNT_ID_PARAMETER, message }]);

/**
 * `accountId` as sent (a string, or an array when repeated), taken out of the query the handler
 * reads: Express 5 parses `req.query` anew at each read, so the request gets a query of its own.
 */
function takeAccountId(request: AccountReadingRequest): unknown {
  const query = request.query;
  if (!Object.hasOwn(query, ACCOUNT_ID_PARAMETER)) return undefined;
  const { [ACCOUNT_ID_PARAMETER]: named, ...rest } = query;
  Object.defineProperty(request, 'query', { value: rest, writable: true, configurable: true, enumerable: true });
  return named;
}
