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
