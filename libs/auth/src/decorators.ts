import { createParamDecorator, ExecutionContext, SetMetadata } from '@nestjs/common';
import type { AuthenticatedKey } from './authenticated-key';

export const IS_PUBLIC = 'auth:public';

/** The only way past the global key guard (health probes, the public checkpoint key). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

/** The authenticated key (who is calling: its account, id and scopes). */
export const CallerKey = createParamDecorator((_: unknown, ctx: ExecutionContext): AuthenticatedKey => {
  const user = ctx.switchToHttp().getRequest<{ user?: AuthenticatedKey }>().user;
  if (!user) throw new Error('@CallerKey() used on a public route');
  return user;
});

/** The authenticated account's id. */
export const Account = createParamDecorator((_: unknown, ctx: ExecutionContext): string => {
  const user = ctx.switchToHttp().getRequest<{ user?: AuthenticatedKey }>().user;
  if (!user) throw new Error('@Account() used on a public route');
  return user.accountId;
});
