import { EventRecord } from '@app/database';
import { erasedFields, hashingOf } from '@app/hashing';
import { EventView } from './dto/event.view';

/** The one place an event becomes its wire shape. */
export function toEventView(event: EventRecord): EventView {
  const timestamp = event.timestamp.toISOString();
  const hashing = hashingOf(event);
  return {
    id: event.id,
    actor: event.actor,
    action: event.action,
    resource: event.resource,
    context: event.context,
    chain: { id: event.chainId, name: event.chainName, position: event.position },
    hash: event.hash,
    previousHash: event.previousHash,
    timestamp,
    createdAt: timestamp,
    // Version-2 events (docs/contract.md §17): what their hash covers, and what was erased.
    ...(hashing && { hashing, erased: erasedFields(hashing) }),
    // The action schema that checked it on append (docs/contract.md §19): absent without one.
    ...(event.schema && {
      schema: { action: event.schema.action, version: event.schema.version, valid: event.schema.valid },
    }),
  };
}
