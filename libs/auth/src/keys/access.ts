import { SCOPES, Scope } from '@app/common';
import { AuthenticatedKey } from '../authenticated-key';

/**
 * Who manages accounts and keys: a key over HTTP, whose scopes decide, or the key CLI on the
 * server's own machine (`cli`: every account, every scope; its changes are not in `_audit`, which
 * records the changes made through the API, contract §12).
 */
export type Caller = AuthenticatedKey | 'cli';

const isOperator = (caller: Caller): boolean => caller === 'cli' || caller.scopes.includes('operator');

/** The one rule of tenancy for accounts and keys: an operator manages every account, an admin its own. */
export function mayManage(caller: Caller, accountId: string): boolean {
  return isOperator(caller) || (caller !== 'cli' && caller.scopes.includes('admin') && caller.accountId === accountId);
}

/** Whether the caller sees every account (else only its own). */
export const seesEveryAccount = isOperator;

/** The scopes the caller may give a key: an admin at most ingest+read+admin; `operator` only an operator. */
export function grantableScopes(caller: Caller): readonly Scope[] {
  return isOperator(caller) ? SCOPES : SCOPES.filter((s) => s !== 'operator');
}
