import { RequestMethod, SetMetadata, Type } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import { Reflector } from '@nestjs/core';
import type { Scope } from '@app/common';
import { IS_PUBLIC } from './decorators';

/** What a route asks of a key: one of these scopes, or `any` valid key. */
export type RouteScopes = readonly Scope[] | 'any';

/** Reads accept `operator` too: an operator key may read (docs/contract.md §12), within its own account `system`. */
export const READ: readonly Scope[] = ['read', 'operator'];
export const INGEST: readonly Scope[] = ['ingest'];
/** Account management: an admin for its own account, an operator for any (KeysService and AccountsService decide which). */
export const MANAGE: readonly Scope[] = ['admin', 'operator'];
export const OPERATOR: readonly Scope[] = ['operator'];

/** The metadata key of a handler's declaration (@RequireScopes or @AnyKey), read by ApiKeyGuard. */
export const REQUIRED_SCOPES = 'auth:required-scopes';

/**
 * Which scopes a key needs to call this handler, one of them being enough (docs/contract.md §1, §12).
 * Declared on each handler, never on its controller: deny by default, a handler that declares
 * nothing (and is not @Public()) is refused to every key (403), and test/scopes.e2e-spec.ts
 * checks every route of the OpenAPI description that needs a key declares its scopes and
 * answers each scope as declared.
 */
export function RequireScopes(scopes: readonly Scope[]): MethodDecorator {
  if (scopes.length === 0)
    throw new Error('@RequireScopes() needs at least one scope (a route no key may call declares nothing)');
  return SetMetadata(REQUIRED_SCOPES, scopes satisfies RouteScopes);
}

/** Any valid key may call this handler, whatever its scopes (e.g. GET /v1/me: who a key is). */
export function AnyKey(): MethodDecorator {
  return SetMetadata(REQUIRED_SCOPES, 'any' satisfies RouteScopes);
}

/** A route handler (a controller's method), as ExecutionContext.getHandler() and Reflector take it. */
type Handler = Parameters<Reflector['get']>[1];

/** What a handler declares (undefined: nothing, so no key may call it). */
export function declaredScopes(reflector: Reflector, handler: Handler): RouteScopes | undefined {
  return reflector.get<RouteScopes | undefined, string>(REQUIRED_SCOPES, handler);
}

/** Whether a key with `scopes` may call a route that asks for `needed` (undefined: nothing declared, refused). */
export function scopesAllow(needed: RouteScopes | undefined, scopes: readonly Scope[]): boolean {
  if (needed === 'any') return true;
  return needed !== undefined && needed.some((scope) => scopes.includes(scope));
}

/** A handler's `METHOD /path`, from its controller's and its own routing metadata. */
export function routeOf(controller: object, handler: object): string {
  const method = Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod | undefined;
  const paths = [Reflect.getMetadata(PATH_METADATA, controller), Reflect.getMetadata(PATH_METADATA, handler)] as (
    string | undefined
  )[];
  const path = paths
    .flatMap((p) => (p ?? '').split('/'))
    .filter((segment) => segment.length > 0)
    .join('/');
  return `${RequestMethod[method ?? RequestMethod.GET]} /${path}`;
}

/**
 * Every route of these controllers that needs a key (not @Public()), by `METHOD /path`, with what
 * its handler declares (undefined: nothing, so refused to every key), read from the classes'
 * metadata as ApiKeyGuard reads it. The table test/scopes.e2e-spec.ts checks the app against.
 */
export function routeScopesOf(controllers: Iterable<Type>): Map<string, RouteScopes | undefined> {
  const reflector = new Reflector();
  const routes = new Map<string, RouteScopes | undefined>();
  for (const controller of controllers) {
    for (const handler of handlersOf(controller)) {
      if (reflector.getAllAndOverride<boolean | undefined>(IS_PUBLIC, [handler, controller]) === true) continue;
      const route = routeOf(controller, handler);
      if (routes.has(route)) throw new Error(`Two handlers serve ${route}`);
      routes.set(route, declaredScopes(reflector, handler));
    }
  }
  return routes;
}

/** A controller's route handlers, its own and inherited ones (those with routing metadata), as Nest finds them. */
function handlersOf(controller: Type): Handler[] {
  const handlers: Handler[] = [];
  const seen = new Set<string>();
  for (
    let prototype = controller.prototype as object | null;
    prototype && prototype !== Object.prototype;
    prototype = Object.getPrototypeOf(prototype) as object | null
  ) {
    for (const name of Object.getOwnPropertyNames(prototype)) {
      if (name === 'constructor' || seen.has(name)) continue;
      seen.add(name);
      const member = Object.getOwnPropertyDescriptor(prototype, name)?.value as unknown;
      if (typeof member === 'function' && Reflect.getMetadata(PATH_METADATA, member) !== undefined)
        handlers.push(member);
    }
  }
  return handlers;
}
