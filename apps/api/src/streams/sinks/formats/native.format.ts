import type { EventView } from '../../../events/dto/event.view';

/** `native`: the API's Event as is, hashes and chain position included, so a receiver can verify it. */
export function toNative(event: EventView): EventView {
  return event;
}
