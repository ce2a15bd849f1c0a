import { ChainStatusRecord } from '@app/database';
import { ChainView } from './dto/chain.view';

/**
 * The one place a chain row becomes its wire shape. The row is the chain head, moved forward in
 * the append's transaction; positions are contiguous from 1, and a prune (docs/contract.md §14) deletes a
 * prefix, so the retained events are firstPosition … lastPosition.
 */
export function toChainView(chain: ChainStatusRecord): ChainView {
  const { retention } = chain;
  return {
    id: chain.id,
    name: chain.name,
    hashVersion: chain.hashVersion,
    lastHash: chain.lastHash,
    lastPosition: chain.lastPosition,
    eventCount: chain.lastPosition - chain.firstPosition + 1,
    createdAt: chain.createdAt.toISOString(),
    firstPosition: chain.firstPosition,
    retentionDays: retention.retentionDays,
    effectiveRetentionDays: retention.effectiveRetentionDays,
    legalHold: retention.legalHold,
    legalHoldBy: retention.legalHoldBy,
    effectiveLegalHold: retention.legalHold || retention.accountLegalHold,
  };
}
