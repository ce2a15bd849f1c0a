import type { EventView } from '../../../events/dto/event.view';
import type { DestinationFormat } from '../sink';
import { toNative } from './native.format';
import { toOcsf } from './ocsf.format';

/** An event as the JSON object a kind embeds (native or ocsf); cef is syslog's own, so it is JSON native here. */
export function toJsonEvent(format: DestinationFormat, event: EventView): object {
  switch (format) {
    case 'ocsf':
      return toOcsf(event);
    case 'native':
    case 'cef':
      return toNative(event);
  }
}

/**
 * The serialized texts of each event, per format: the delivery engine hands the same view objects
 * to every destination that reads the same page (delivery/shared-pages.ts), so each event is turned
 * into JSON once per format, however many destinations send it.
 */
const texts = new WeakMap<EventView, Partial<Record<DestinationFormat, string>>>();

/** JSON.stringify(toJsonEvent(format, event)), computed once per view and format. */
export function jsonEventText(format: DestinationFormat, event: EventView): string {
  let known = texts.get(event);
  if (!known) {
    known = {};
    texts.set(event, known);
  }
  return (known[format] ??= JSON.stringify(toJsonEvent(format, event)));
}

/** A batch's events joined as the members of a JSON array, kept per first event: the batch of the same events is the same bytes. */
const joined = new WeakMap<EventView, { format: DestinationFormat; last: EventView; count: number; bytes: Buffer }[]>();

/** `jsonEventText` of each event, comma-separated, as UTF-8: the inside of `[…]`, computed once per batch of the same views. */
export function jsonEventsBytes(format: DestinationFormat, events: readonly EventView[]): Buffer {
  const first = events[0];
  if (first === undefined) return Buffer.alloc(0);
  const last = events[events.length - 1]!;
  let known = joined.get(first);
  const hit = known?.find((j) => j.format === format && j.last === last && j.count === events.length);
  if (hit) return hit.bytes;
  const bytes = Buffer.from(events.map((event) => jsonEventText(format, event)).join(','), 'utf8');
  if (!known) {
    known = [];
    joined.set(first, known);
  }
  known.push({ format, last, count: events.length, bytes });
  return bytes;
}
