import { RequestMethod } from '@nestjs/common';
import { METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import type { Scope } from '@app/common';

/** What a route asks of a key: one of these scopes, or `any` valid key. */
export type RouteScopes = readonly Scope[] | 'any';

/** Reads accept `operator` too: an operator key may read (docs/contract.md §12), within its own account `system`. */
const READ: RouteScopes = ['read', 'operator'];
const INGEST: RouteScopes = ['ingest'];
/** Account management: an admin for its own account, an operator for any (KeysService and AccountsService decide which). */
const MANAGE: RouteScopes = ['admin', 'operator'];
const OPERATOR: RouteScopes = ['operator'];

/**
 * The one place that decides which scope each route needs (docs/contract.md §1, §12), by `METHOD /path`
 * as the controllers declare it. Deny by default: a route missing here is refused to every key
 * (403), and test/scopes.e2e-spec.ts checks every route of the OpenAPI description is listed and
 * answers each scope as this table says. Routes without a key are marked @Public() instead.
 */
export const ROUTE_SCOPES: Readonly<Record<string, RouteScopes>> = {
  'POST /v1/events': INGEST,
  'POST /v1/events/batch': INGEST,
  'GET /v1/events': READ,
  'GET /v1/events/:id': READ,
  'GET /v1/events/export': READ,
  'GET /v1/events/stream': READ,
  'GET /v1/stats/events': READ,
  'GET /v1/events/:id/verify': READ,
  'GET /v1/events/:id/proof': READ,
  'GET /v1/chains': READ,
  'GET /v1/chain/:chainId/status': READ,
  'GET /v1/chain/:chainId/verify': READ,
  'GET /v1/chain/:chainId/checkpoint': READ,
  'GET /v1/chain/:chainId/consistency': READ,
  'GET /v1/me': 'any',
  'GET /v1/accounts': MANAGE,
  'POST /v1/accounts': OPERATOR,
  'GET /v1/accounts/:accountId': MANAGE,
  'GET /v1/accounts/:accountId/keys': MANAGE,
  'POST /v1/accounts/:accountId/keys': MANAGE,
  'DELETE /v1/accounts/:accountId/keys/:keyId': MANAGE,
  'POST /v1/accounts/:accountId/keys/:keyId/rotate': MANAGE,
  // Stream destinations (docs/contract.md §16): an admin for its account, an operator for any (DestinationTransactions decides which).
  'GET /v1/accounts/:accountId/destinations': MANAGE,
  'POST /v1/accounts/:accountId/destinations': MANAGE,
  'GET /v1/accounts/:accountId/destinations/:destinationId': MANAGE,
  'PATCH /v1/accounts/:accountId/destinations/:destinationId': MANAGE,
  'DELETE /v1/accounts/:accountId/destinations/:destinationId': MANAGE,
  'POST /v1/accounts/:accountId/destinations/:destinationId/pause': MANAGE,
  'POST /v1/accounts/:accountId/destinations/:destinationId/resume': MANAGE,
  'POST /v1/accounts/:accountId/destinations/:destinationId/replay': MANAGE,
  'POST /v1/accounts/:accountId/destinations/:destinationId/rotate-secret': MANAGE,
  // Retention and legal hold (docs/contract.md §14): settings by an admin (its account) or an operator; the sweep by an operator.
  'PUT /v1/chain/:chainId/retention': MANAGE,
  'PUT /v1/chain/:chainId/legal-hold': MANAGE,
  'PUT /v1/accounts/:accountId/retention': MANAGE,
  'PUT /v1/accounts/:accountId/legal-hold': MANAGE,
  'POST /v1/retention/sweep': OPERATOR,
};

/** A handler's `METHOD /path`, from its controller's and its own routing metadata (the key of ROUTE_SCOPES). */
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

/** Whether a key with `scopes` may call a route that asks for `needed` (undefined: not listed, refused). */
export function scopesAllow(needed: RouteScopes | undefined, scopes: readonly Scope[]): boolean {
  if (needed === 'any') return true;
  return needed !== undefined && needed.some((scope) => scopes.includes(scope));
}
