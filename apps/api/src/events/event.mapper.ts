import { EventEntity } from '@app/database';
import { EventView } from './dto/event.view';
import type { EventRow } from './event-query';

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

/** The same wire shape from a plain row of selectEventRows. */
export function rowToEventView(row: EventRow): EventView {
  const timestamp = row.timestamp.toISOString();
  return {
    id: row.id,
    actor: row.actor,
    action: row.action,
    resource: row.resource,
    context: row.context,
    chain: { id: row.chain_id, name: row.chain_name, position: Number(row.position) },
    hash: row.hash,
    previousHash: row.previous_hash,
    timestamp,
    createdAt: timestamp,
  };
}
