import type { EventView } from '../../../events/dto/event.view';
import { toCef } from '../formats/cef.format';
import { toJsonEvent } from '../formats/json-event';
import type { SinkTarget } from '../sink';

/** PRI: facility 13 (log audit), severity 6 (informational), RFC 5424 §6.2.1. */
const PRI = 13 * 8 + 6;

/** An RFC 5424 header field: printable US-ASCII only, bounded, `-` (NILVALUE) when empty. */
export function headerField(value: string, maxLength: number): string {
  const printable = value.replace(/[^\x21-\x7e]/g, '').slice(0, maxLength);
  return printable || '-';
}

/**
 * One event as an RFC 5424 message, framed by octet counting (RFC 6587 §3.4.1: `<length> <message>`).
 * MSG is the event as JSON (native or ocsf) or CEF, without a BOM (RFC 5424 MSG-ANY), so it is
 * exactly what a JSON or CEF parser expects.
 */
export function syslogFrame(target: SinkTarget, event: EventView): Buffer {
  const msg = target.format === 'cef' ? toCef(event) : JSON.stringify(toJsonEvent(target.format, event));
  const header = [
    `<${PRI}>1`,
    event.timestamp,
    headerField(target.hostname, 255),
    'audit-trail',
    String(process.pid),
    'audit',
    '-', // no structured data
  ].join(' ');
  const message = Buffer.from(`${header} ${msg}`, 'utf8');
  return Buffer.concat([Buffer.from(`${message.length} `, 'ascii'), message]);
}
