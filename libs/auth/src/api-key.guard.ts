import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import type { Scope } from '@app/common';
import { AppError } from '@app/common';
import { API_KEY_STRATEGY } from './api-key.strategy';
import { AuthenticatedKey } from './authenticated-key';
import { IS_PUBLIC, REQUIRED_SCOPE } from './decorators';

/** Global (APP_GUARD): every route needs a valid key with the route's scope unless @Public(). */
@Injectable()
export class ApiKeyGuard extends AuthGuard(API_KEY_STRATEGY) {
  constructor(private readonly reflector: Reflector) {
    super({ session: false });
  }

  override async canActivate(context: ExecutionContext): Promise<boolean> {
    if (this.metadata<boolean>(IS_PUBLIC, context)) return true;
    await super.canActivate(context);
    const user = context.switchToHttp().getRequest<{ user: AuthenticatedKey }>().user;
    const scope = this.metadata<Scope>(REQUIRED_SCOPE, context) ?? 'read';
    if (!user.scopes.includes(scope)) {
      throw new AppError('FORBIDDEN', `This key lacks the '${scope}' scope.`, { requiredScope: scope });
    }
    return true;
  }

  override handleRequest<T>(error: unknown, user: T): T {
    if (error || !user) {
      throw new AppError(
        'UNAUTHORIZED',
        'A valid API key is required: Authorization: Bearer <key>.',
        {},
        { 'WWW-Authenticate': 'Bearer' },
      );
    }
    return user;
  }

  private metadata<T>(key: string, context: ExecutionContext): T | undefined {
    return this.reflector.getAllAndOverride<T>(key, [context.getHandler(), context.getClass()]);
  }
}
