import { CanActivate, ExecutionContext, Injectable, UnauthorizedException } from '@nestjs/common';

/**
 * Stands for the application's own authentication (passport, a JWT guard…): whatever it is, it puts
 * the principal in `request.user`, where @Audited takes the actor from. Here: the X-User header.
 */
@Injectable()
export class DemoAuthGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context
      .switchToHttp()
      .getRequest<{ headers: Record<string, string | undefined>; user?: unknown }>();
    const user = request.headers['x-user'];
    if (!user) throw new UnauthorizedException('send X-User');
    request.user = { id: user };
    return true;
  }
}
