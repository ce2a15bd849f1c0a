import { ACCOUNT_ID, AppError, SCOPES, Scope, scopesProblem } from '@app/common';
import { AuthenticatedKey } from '../authenticated-key';

/**
 * Who manages accounts and keys: a key over HTTP, whose scopes decide, or the key CLI on the
 * server's own machine (`cli`: every account, every scope; its changes are not in `_audit`, which
 * records the changes made through the API, docs/contract.md §12).
 */
export type Caller = AuthenticatedKey | 'cli';

const isOperator = (caller: Caller): boolean => caller === 'cli' || caller.scopes.includes('operator');

/** The one rule of tenancy for accounts and keys: an operator manages every account, an admin its own. */
export function mayManage(caller: Caller, accountId: string): boolean {
  return isOperator(caller) || (caller !== 'cli' && caller.scopes.includes('admin') && caller.accountId === accountId);
}

/**
 * 404 unless the caller may manage the account `accountId` names (a malformed id names none): the
 * same answer as for an account that does not exist, so a key learns nothing of others (docs/contract.md §6).
 */
export function assertMayManage(caller: Caller, accountId: string): void {
  if (!ACCOUNT_ID.test(accountId) || !mayManage(caller, accountId)) throw AppError.notFound(`Account ${accountId}`);
}

/**
 * The account `accountId` names, as `read` finds it (or locks it), if the caller may manage it;
 * else, or when there is none, the same 404 (assertMayManage). `read` runs only for an account the
 * caller may manage.
 */
export async function manageableAccount<A>(
  caller: Caller,
  accountId: string,
  read: (accountId: string) => Promise<A | null>,
): Promise<A> {
  assertMayManage(caller, accountId);
  const account = await read(accountId);
  if (account === null) throw AppError.notFound(`Account ${accountId}`);
  return account;
}

/** Whether the caller sees every account (else only its own). */
export const seesEveryAccount = isOperator;

/** The scopes the caller may give a key: an admin at most ingest+read+admin; `operator` only an operator. */
export function grantableScopes(caller: Caller): readonly Scope[] {
  return isOperator(caller) ? SCOPES : SCOPES.filter((s) => s !== 'operator');
}

/**
 * Whether the caller may revoke or rotate a key with these scopes: it needs every one of them, as
 * far as it can give them (an operator every scope; an admin ingest, read, admin), so an `admin`
 * key never revokes an `operator` key (docs/contract.md §12).
 */
export function holdsEvery(caller: Caller, scopes: readonly Scope[]): boolean {
  const allowed = grantableScopes(caller);
  return scopes.every((s) => allowed.includes(s));
}

/** 403 unless the caller may give a key of the account named `accountName` these scopes. */
export function assertMayGive(caller: Caller, accountName: string, scopes: readonly Scope[]): void {
  const allowed = grantableScopes(caller);
  const beyond = scopes.filter((s) => !allowed.includes(s));
  if (beyond.length > 0)
    throw new AppError('FORBIDDEN', `This key cannot give the scope(s) ${beyond.join(', ')}.`, { scopes: beyond });
  const problem = scopesProblem(accountName, scopes);
  if (problem) throw new AppError('FORBIDDEN', `Not allowed: ${problem}.`, {});
}

/** 403 unless the caller holds every scope of the key it revokes or rotates (holdsEvery). */
export function assertMayChange(caller: Caller, key: { id: string; scopes: readonly Scope[] }): void {
  if (!holdsEvery(caller, key.scopes))
    throw new AppError('FORBIDDEN', 'Revoking or rotating a key needs every scope it has.', {
      keyId: key.id,
      scopes: key.scopes.filter((s) => !grantableScopes(caller).includes(s)),
    });
}
