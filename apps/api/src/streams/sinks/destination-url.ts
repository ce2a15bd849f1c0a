import { sinkKind } from './kinds';
import type { DestinationFormat, DestinationKind } from './sink';

/** A destination URL, in characters. */
export const MAX_DESTINATION_URL_LENGTH = 2048;

/** Which formats a kind takes (docs/contract.md §16: cef is for syslog only). */
export function formatsOf(kind: DestinationKind): readonly DestinationFormat[] {
  return sinkKind(kind).formats;
}

/**
 * For create/PATCH validation (docs/contract.md §16 "Creating"): null, or why this URL is not acceptable for
 * this kind (a 400 message): the rules of every kind here, the kind's own in its module. Private addresses
 * are not refused here but at each attempt, since a name's addresses can change after it is checked.
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
  return sinkKind(kind).urlProblem(parsed, allowPrivateNetworks);
}
