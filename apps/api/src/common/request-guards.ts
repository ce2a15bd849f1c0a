import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { isObservable, lastValueFrom } from 'rxjs';
import { ApiKeyGuard, RateLimitGuard } from '@app/auth';
import { ReadAccountGuard } from '../read-account/read-account.guard';
import { ReadAdmission } from '../reads/read-admission';
import { JsonBodyGuard } from './json-body';
import { PathParamRequest, refuseMalformedPathParam } from './path-params';

/**
 * The one global guard (APP_GUARD in AppModule): the steps every request takes before its handler,
 * in an order written here and nowhere else, not left to the order Nest finds guards in modules.
 * Deny by default: ApiKeyGuard (a key with the route's scope, unless @Public()), then the per-key
 * rate limit, then the account the request reads (ReadAccountGuard: an operator's `accountId`,
 * docs/contract.md §12), then that account's bounded reads (ReadAdmission: 429 before the query is
 * parsed), then the path parameters (a malformed one is a 400) and the body, read only now
 * (docs/contract.md §8: authentication comes first).
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
    this.steps = [apiKey, rateLimit, readAccount, reads, PATH_PARAMS, body];
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    for (const step of this.steps) {
      const passed = step.canActivate(context);
      if (!(isObservable(passed) ? await lastValueFrom(passed) : await passed)) return false;
    }
    return true;
  }
}

/** The step that refuses a path parameter routing could not decode (marked by app.setup.ts). */
const PATH_PARAMS: CanActivate = {
  canActivate(context: ExecutionContext): boolean {
    if (context.getType() === 'http') refuseMalformedPathParam(context.switchToHttp().getRequest<PathParamRequest>());
    return true;
  },
};
