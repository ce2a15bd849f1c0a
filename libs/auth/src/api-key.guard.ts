import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Scope } from '@app/common';
import { AppError } from '@app/common';
import { authenticationOf } from './authentication.middleware';
import { AuthenticatedKey } from './authenticated-key';
import { IS_PUBLIC, REQUIRED_SCOPE } from './decorators';
import { Authentication } from './key-authenticator';

/**
 * Global (APP_GUARD): every route needs a valid key with the route's scope unless @Public().
 * The key was resolved from the Authorization header before the body was read
 * (authenticateRequests); this is where a request without one is refused.
 */
@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(context: ExecutionContext): boolean {
    if (this.metadata<boolean>(IS_PUBLIC, context)) return true;
    const request = context.switchToHttp().getRequest<{ user?: AuthenticatedKey }>();
    const key = admittedKey(authenticationOf(request));
    const scope = this.metadata<Scope>(REQUIRED_SCOPE, context) ?? 'read';
    if (!key.scopes.includes(scope)) {
      throw new AppError('FORBIDDEN', `This key lacks the '${scope}' scope.`, { requiredScope: scope });
    }
    request.user = key;
    return true;
  }

  private metadata<T>(key: string, context: ExecutionContext): T | undefined {
    return this.reflector.getAllAndOverride<T>(key, [context.getHandler(), context.getClass()]);
  }
}

function admittedKey(authentication: Authentication): AuthenticatedKey {
  switch (authentication.outcome) {
    case 'authenticated':
      return authentication.key;
    case 'missing':
    case 'refused':
      throw new AppError(
        'UNAUTHORIZED',
        'A valid API key is required: Authorization: Bearer <key>.',
        {},
        { 'WWW-Authenticate': 'Bearer' },
      );
    case 'throttled':
      throw new AppError(
        'RATE_LIMITED',
        `Too many refused API keys from this address: at most ${authentication.limitPerMinute} a minute.`,
        { failedAuthenticationsPerMinute: authentication.limitPerMinute },
        { 'Retry-After': String(authentication.retryAfterSeconds) },
      );
    case 'unavailable':
      throw AppError.unavailable('API keys cannot be checked right now (the database is unavailable); retry later.');
  }
}
