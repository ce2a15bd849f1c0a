import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { AuthGuard } from '@nestjs/passport';
import { AppError, asError, Metrics } from '@app/common';
import { API_KEY_STRATEGY } from './api-key.strategy';
import { AuthenticatedKey } from './authenticated-key';
import { IS_PUBLIC } from './decorators';
import { Authentication } from './key-authenticator';
import { declaredScopes, RouteScopes, scopesAllow } from './route-scopes';

/**
 * Run on every request by RequestGuards (the app's one APP_GUARD): every route needs a valid key with a scope its handler
 * declares (@RequireScopes, or @AnyKey) unless @Public(); a handler that declares nothing is refused to every key (403).
 * The body is read only after this guard let a request through with a key (JsonBodyGuard, the
 * last guard): a request refused here never has its body read, whatever it is (docs/contract.md §8).
 */
@Injectable()
export class ApiKeyGuard extends AuthGuard(API_KEY_STRATEGY) {
  constructor(
    private readonly reflector: Reflector,
    private readonly metrics: Metrics,
  ) {
    super();
  }

  /** What each handler asks for, read once from its decorators (per class: a handler may be inherited). */
  private readonly routes = new WeakMap<object, WeakMap<object, RouteAccess>>();

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    const { isPublic, scopes } = this.access(context);
    if (isPublic) return true;
    await super.canActivate(context); // ApiKeyStrategy, then handleRequest; sets request.user
    const key = context.switchToHttp().getRequest<{ user: AuthenticatedKey }>().user;
    if (!scopesAllow(scopes, key.scopes)) {
      const needed = scopes === undefined || scopes === 'any' ? [] : scopes;
      throw new AppError('FORBIDDEN', `This key lacks the scope this route needs (${needed.join(' or ') || 'none'}).`, {
        requiredScopes: needed,
      });
    }
    return true;
  }

  /**
   * Authenticates a request that no route took, exactly as a route would (same strategy, same
   * refusals, same metrics): under /v1/ a 401 comes before the 404 or 405 that would tell routes
   * apart (docs/contract.md §8). Sets request.user; throws the refusal (401, 429 or 503).
   */
  async authenticate(request: object, response: object): Promise<void> {
    await super.canActivate(new ExecutionContextHost([request, response]));
  }

  /** Passport's verdict: the key, or the strategy's failure (its outcome) as 401, 429 or 503. */
  override handleRequest<T>(error: unknown, key: T | false, failure: Refusal | undefined): T {
    if (error) throw asError(error);
    if (key) return key;
    const refused = failure ?? { outcome: 'missing' };
    if (refused.outcome === 'throttled') this.metrics.requestRateLimited();
    else if (refused.outcome !== 'unavailable') this.metrics.authenticationFailed();
    throw refusal(refused);
  }

  private access(context: ExecutionContext): RouteAccess {
    const handler = context.getHandler();
    const controller = context.getClass();
    let handlers = this.routes.get(controller);
    if (!handlers) this.routes.set(controller, (handlers = new WeakMap()));
    let access = handlers.get(handler);
    if (!access) {
      const targets = [handler, controller];
      access = {
        isPublic: this.reflector.getAllAndOverride<boolean>(IS_PUBLIC, targets) === true,
        scopes: declaredScopes(this.reflector, handler),
      };
      handlers.set(handler, access);
    }
    return access;
  }
}

interface RouteAccess {
  isPublic: boolean;
  /** undefined: the handler declares no scopes, so no key may call it (deny by default). */
  scopes: RouteScopes | undefined;
}

/** What ApiKeyStrategy hands passport as the failure of a request without a valid key. */
type Refusal = Exclude<Authentication, { outcome: 'authenticated' }>;

function refusal(failure: Refusal): AppError {
  switch (failure.outcome) {
    case 'missing':
    case 'refused':
      return AppError.unauthorized();
    case 'throttled':
      return new AppError(
        'RATE_LIMITED',
        `Too many refused API keys from this address: at most ${failure.limitPerMinute} a minute.`,
        { failedAuthenticationsPerMinute: failure.limitPerMinute },
        { 'Retry-After': String(failure.retryAfterSeconds) },
      );
    case 'unavailable':
      return AppError.unavailable('API keys cannot be checked right now (the database is unavailable); retry later.');
  }
}
