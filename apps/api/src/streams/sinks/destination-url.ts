import { natsSubjectOf } from './transports/nats-subject';
import type { DestinationFormat, DestinationKind } from './sink';

/** A destination URL, in characters. */
export const MAX_DESTINATION_URL_LENGTH = 2048;

const JSON_FORMATS: readonly DestinationFormat[] = ['native', 'ocsf'];
const SYSLOG_FORMATS: readonly DestinationFormat[] = ['native', 'ocsf', 'cef'];

/** Which formats a kind takes (docs/contract.md §16: cef is for syslog only). */
export function formatsOf(kind: DestinationKind): readonly DestinationFormat[] {
  return kind === 'syslog' ? SYSLOG_FORMATS : JSON_FORMATS;
}

/**
 * For create/PATCH validation (docs/contract.md §16 "Creating"): null, or why this URL is not acceptable for
 * this kind (a 400 message). Private addresses are not refused here but at each attempt, since a
 * name's addresses can change after it is checked.
 */
export function destinationUrlProblem(
  kind: DestinationKind,
  url: string,
  allowPrivateNetworks: boolean,
): string | null {
  if (url.length > MAX_DESTINATION_URL_LENGTH) return `must be at most ${MAX_DESTINATION_URL_LENGTH} characters`;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL';
  }
  if (parsed.username || parsed.password) return 'must not carry a user name or password (use the credential fields)';
  if (url.includes('#')) return 'must not have a fragment';
  if (!parsed.hostname) return 'must name a host';
  switch (kind) {
    case 'webhook':
    case 'splunk_hec':
    case 'datadog':
    case 'otlp':
      return httpProblem(parsed, allowPrivateNetworks);
    case 'syslog':
      return socketProblem(parsed, ['syslog:', 'syslog+tls:'], 'must be syslog://host:port or syslog+tls://host:port');
    case 'nats':
      return socketProblem(parsed, ['nats:'], 'must be nats://host:port/<subject>', true);
  }
}

function httpProblem(url: URL, allowPrivateNetworks: boolean): string | null {
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:')
    return allowPrivateNetworks ? null : 'must be https:// (http:// only with STREAM_ALLOW_PRIVATE_NETWORKS=true)';
  return 'must be an https:// URL';
}

function socketProblem(url: URL, protocols: string[], shape: string, subject = false): string | null {
  if (!protocols.includes(url.protocol) || !url.port || Number(url.port) === 0 || url.search) return shape;
  if (subject) return natsSubjectOf(url) === null ? `${shape} (a subject: dot-separated tokens, no wildcard)` : null;
  return url.pathname === '' || url.pathname === '/' ? null : shape;
}
