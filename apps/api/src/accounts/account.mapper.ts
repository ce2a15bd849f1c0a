import { AccountRow } from '@app/database';
import { AccountView } from './dto/account.view';

export interface AccountTotals {
  eventCount: number;
  chainCount: number;
  lastEventAt: Date | null;
  keyCount: number;
}

/** The one place an account row and its totals become the wire shape. */
export function toAccountView(account: AccountRow, totals: AccountTotals): AccountView {
  return {
    id: account.id,
    name: account.name,
    createdAt: account.createdAt.toISOString(),
    eventCount: totals.eventCount,
    chainCount: totals.chainCount,
    lastEventAt: totals.lastEventAt?.toISOString() ?? null,
    keyCount: totals.keyCount,
    retentionDays: account.retentionDays,
    legalHold: account.legalHold,
    legalHoldBy: account.legalHoldBy,
  };
}
