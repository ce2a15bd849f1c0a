import { EventRecord } from '@app/database';
import { erasedFields, hashingOf } from '@app/hashing';
import { EventView } from './dto/event.view';

/** The one place an event becomes its wire shape. */
export function toEventView(event: EventRecord): EventView {
  const view = toEventFields(event);
  // Version-2 events (docs/contract.md §17): what their hash covers, and what was erased. The salts
  // are derived from the stored seed on every read (6 SHA-256 calls for an event of four members):
  // stored, they would cost ~17 bytes a field on disk (docs/performance.md, issue 41).
  const hashing = hashingOf(event);
  if (hashing) {
    view.hashing = hashing;
    view.erased = erasedFields(hashing);
  }
  return view;
}

/**
 * An event's wire shape without version 2's `hashing` and `erased`: what an export's items are
 * (a JSON export carries every event's hashing once, in `export.hashing`; a CSV export none).
 */
export function toEventFields(event: EventRecord): EventView {
  const timestamp = event.timestamp.toISOString();
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
    // The action schema that checked it on append (docs/contract.md §19): absent without one.
    ...(event.schema && {
      schema: { action: event.schema.action, version: event.schema.version, valid: event.schema.valid },
    }),
  };
}
