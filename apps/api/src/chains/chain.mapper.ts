import { ChainRecord } from '@app/database';
import { ChainView } from './dto/chain.view';

/**
 * The one place a chain row becomes its wire shape. The row is the chain head, moved forward in
 * the append's transaction; positions are contiguous from 1, so the count is the last position.
 */
export function toChainView(chain: ChainRecord): ChainView {
  return {
    id: chain.id,
    name: chain.name,
    lastHash: chain.lastHash,
    lastPosition: chain.lastPosition,
    eventCount: chain.lastPosition,
    createdAt: chain.createdAt.toISOString(),
  };
}
