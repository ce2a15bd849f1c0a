import { EventEntity } from '@app/database';
import { EventView } from './dto/event.view';

/** The one place an event row becomes its wire shape. */
export function toEventView(event: EventEntity, chainName: string): EventView {
  const timestamp = event.timestamp.toISOString();
  return {
    id: event.id,
    actor: event.actor,
    action: event.action,
    resource: event.resource,
    context: event.context,
    chain: { id: event.chainId, name: chainName, position: event.position },
    hash: event.hash,
    previousHash: event.previousHash,
    timestamp,
    createdAt: timestamp,
  };
}
