import type { DestinationFormat, DestinationKind, Sink, SinkTarget } from './sink';

/** The settings only some kinds take (docs/contract.md §16): anything else sent with another kind is a 400. */
export type KindField = 'token' | 'apiKey' | 'sourcetype' | 'index';

/**
 * Everything a kind of destination knows, in its transport's module (as each of Vector's sinks holds
 * its own config, validation and transport): the formats it writes, the settings only it takes, the
 * URLs it sends to, and how it opens a connection. `kinds.ts` lists them; the API's validation, the
 * OpenAPI enums and the engine read them from there.
 */
export interface SinkKind<K extends DestinationKind = DestinationKind> {
  kind: K;
  formats: readonly DestinationFormat[];
  /** The settings only this kind takes; `required` ones must be given at creation. */
  fields: { readonly [F in KindField]?: 'optional' | 'required' };
  /** Why this (absolute, credential-free) URL is not one this kind sends to, or null. */
  urlProblem(url: URL, allowPrivateNetworks: boolean): string | null;
  /** The sink of a destination of this kind; nothing connects before deliver(). */
  open(target: SinkTarget): Sink;
}

/** The JSON formats (every kind but syslog). */
export const JSON_FORMATS: readonly DestinationFormat[] = ['native', 'ocsf'];

/** The URL rule of the HTTP kinds: https, or http with STREAM_ALLOW_PRIVATE_NETWORKS. */
export function httpUrlProblem(url: URL, allowPrivateNetworks: boolean): string | null {
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:')
    return allowPrivateNetworks ? null : 'must be https:// (http:// only with STREAM_ALLOW_PRIVATE_NETWORKS=true)';
  return 'must be an https:// URL';
}

/** The URL rule of the socket kinds: one of `protocols`, a port, no query (and a path only where `path` allows it). */
export function socketUrlProblem(
  url: URL,
  protocols: readonly string[],
  shape: string,
  path: (url: URL) => string | null = (u) => (u.pathname === '' || u.pathname === '/' ? null : shape),
): string | null {
  if (!protocols.includes(url.protocol) || !url.port || Number(url.port) === 0 || url.search) return shape;
  return path(url);
}
