import { EventEntity } from '@app/database';
import { EventView } from './dto/event.view';

/** An event as stored, with its chain's name: an entity plus name, or a row of selectEventRows. */
export type EventRecord = Pick<
  EventEntity,
  'id' | 'chainId' | 'actor' | 'action' | 'resource' | 'context' | 'timestamp' | 'previousHash' | 'hash'
> & {
  chainName: string;
  /** int8 arrives as text in raw rows. */
  position: number | string;
};

/** The one place an event becomes its wire shape. */
export function toEventView(event: EventRecord): EventView {
  const timestamp = event.timestamp.toISOString();
  return {
    id: event.id,
    actor: event.actor,
    action: event.action,
    resource: event.resource,
    context: event.context,
    chain: { id: event.chainId, name: event.chainName, position: Number(event.position) },
    hash: event.hash,
    previousHash: event.previousHash,
    timestamp,
    createdAt: timestamp,
  };
}
