import type { EventView } from '../../../events/dto/event.view';

/** CEF header values: backslash and pipe escaped, and no line break (ArcSight CEF spec, "Character Encoding"). */
export function cefHeader(value: string): string {
  return value.replace(/[\\|]/g, (c) => `\\${c}`).replace(/[\u0000-\u001f\u007f]/g, ' ');
}

/** CEF extension values: backslash and equals escaped, CR and LF as \r and \n (ArcSight CEF spec). */
export function cefValue(value: string): string {
  return value
    .replace(/[\\=]/g, (c) => `\\${c}`)
    .replace(/[\r\n]/g, (c) => (c === '\n' ? '\\n' : '\\r'))
    .replace(/[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f]/g, ' ');
}

/**
 * `cef` (syslog only): `CEF:0|audit-trail|audit-trail|1|<action>|<action>|3|<extension>`, with the
 * standard keys where CEF has one (rt, suser, act, externalId) and labelled custom strings for the rest.
 */
export function toCef(event: EventView): string {
  const extension: [string, string][] = [
    ['rt', String(Date.parse(event.timestamp))],
    ['externalId', event.id],
    // An erased actor (docs/contract.md §17) is left out, like a null resource.
    ...(event.actor === null ? [] : ([['suser', event.actor]] as [string, string][])),
    ['act', event.action],
    ...(event.resource === null ? [] : labelled('cs1', 'resource', event.resource)),
    ...labelled('cs2', 'chainName', event.chain.name),
    ...labelled('cs3', 'chainId', event.chain.id),
    ...labelled('cn1', 'chainPosition', String(event.chain.position)),
    ...labelled('cs4', 'hash', event.hash),
    ...labelled('cs5', 'previousHash', event.previousHash),
    ...(event.context === null ? [] : labelled('cs6', 'context', JSON.stringify(event.context))),
  ];
  const action = cefHeader(event.action);
  const header = ['CEF:0', 'audit-trail', 'audit-trail', '1', action, action, '3'].join('|');
  return `${header}|${extension.map(([key, value]) => `${key}=${cefValue(value)}`).join(' ')}`;
}

function labelled(key: string, label: string, value: string): [string, string][] {
  return [
    [`${key}Label`, label],
    [key, value],
  ];
}
