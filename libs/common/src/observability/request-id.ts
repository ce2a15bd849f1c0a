import { createParamDecorator, ExecutionContext } from '@nestjs/common';

/** What requestIdOf needs: the request's headers. */
interface WithHeaders {
  headers: Record<string, string | string[] | undefined>;
}

/**
 * The request's id (docs/contract.md §11, X-Request-Id), as the API's first middleware settled it: a sane
 * id the client sent, or a generated one. Lines logged while handling a request carry it as
 * `reqId`, passed explicitly: no async context is kept per request (docs/architecture.md, Logs).
 */
export function requestIdOf(req: WithHeaders): string | undefined {
  const id = req.headers['x-request-id'];
  return typeof id === 'string' ? id : undefined;
}

/** The handled request's id, for a handler that logs or hands it to what logs. */
export const RequestId = createParamDecorator((_: unknown, ctx: ExecutionContext): string | undefined =>
  requestIdOf(ctx.switchToHttp().getRequest<WithHeaders>()),
);
