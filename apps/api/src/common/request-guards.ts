import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { isObservable, lastValueFrom } from 'rxjs';
import { ApiKeyGuard, RateLimitGuard } from '@app/auth';
import { ReadAccountGuard } from '../read-account/read-account.guard';
import { ReadAdmission } from '../reads/read-admission';
import { JsonBodyGuard } from './json-body';
import { PathParamRequest, refuseMalformedPathParam } from './path-params';
import { refuseMalformedQuery } from './query-params';

/**
 * The one global guard (APP_GUARD in AppModule): the steps every request takes before its handler,
 * in an order written here and nowhere else, not left to the order Nest finds guards in modules.
 * Deny by default: ApiKeyGuard (a key with the route's scope, unless @Public()), then the per-key
 * rate limit, then the strings of the URL (a path or query parameter that is not percent-encoded
 * UTF-8 or holds U+0000 is a 400, before any step reads them: docs/contract.md §8, one check for
 * every string, the body's in parseIJson), then the account the request reads (ReadAccountGuard:
 * an operator's `accountId`, docs/contract.md §12), then that account's bounded reads
 * (ReadAdmission: 429 before the query is parsed), then the body, read only now (docs/contract.md
 * §8: authentication comes first).
 */
@Injectable()
export class RequestGuards implements CanActivate {
  private readonly steps: readonly CanActivate[];

  constructor(
    apiKey: ApiKeyGuard,
    rateLimit: RateLimitGuard,
    readAccount: ReadAccountGuard,
    reads: ReadAdmission,
    body: JsonBodyGuard,
  ) {
    this.steps = [apiKey, rateLimit, URL_STRINGS, readAccount, reads, body];
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    for (const step of this.steps) {
      const passed = step.canActivate(context);
      if (!(isObservable(passed) ? await lastValueFrom(passed) : await passed)) return false;
    }
    return true;
  }
}

/** The step that refuses a path parameter routing marked as malformed (app.setup.ts), then a malformed query parameter. */
const URL_STRINGS: CanActivate = {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() !== 'http') return true;
    const req = context.switchToHttp().getRequest<PathParamRequest>();
    refuseMalformedPathParam(req);
    refuseMalformedQuery(req);
    return true;
  },
};
