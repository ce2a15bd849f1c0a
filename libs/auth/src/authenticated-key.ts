import type { Scope } from '@app/common';

/** Who is calling: attached to the request by the key strategy. */
export interface AuthenticatedKey {
  keyId: string;
  accountId: string;
  scopes: readonly Scope[];
}
