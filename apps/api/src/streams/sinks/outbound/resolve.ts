import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { AddressNotAllowedError, isForbiddenAddress } from './address-policy';

/** A URL's hostname as DNS and net want it: IPv6 literals without their brackets. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname;
}

/** The host's addresses that policy allows, in resolver order; AddressNotAllowedError when none. */
export async function resolveAllowed(host: string, allowPrivateNetworks: boolean): Promise<LookupAddress[]> {
  const addresses: LookupAddress[] =
    isIP(host) !== 0
      ? [{ address: host, family: isIP(host) }]
      : await new Promise((resolve, reject) =>
          dnsLookup(host, { all: true }, (error, found) => (error ? reject(error) : resolve(found))),
        );
  const allowed = allowPrivateNetworks ? addresses : addresses.filter((a) => !isForbiddenAddress(a.address));
  if (allowed.length === 0) throw new AddressNotAllowedError(host);
  return allowed;
}

/**
 * A `lookup` for http(s).request and net/tls.connect: the host is resolved at every connection and
 * only the addresses that pass the policy are handed to the socket, so the checked address is the
 * one connected to (no second resolution a rebinding DNS server could answer differently).
 * Node skips `lookup` for IP literals: callers check those with resolveAllowed first.
 */
export function policyLookup(allowPrivateNetworks: boolean): LookupFunction {
  return (hostname, options, callback) => {
    resolveAllowed(hostname, allowPrivateNetworks).then(
      (found) => {
        const wanted =
          options.family === 4 || options.family === 6 ? found.filter((a) => a.family === options.family) : found;
        if (wanted.length === 0) return callback(new AddressNotAllowedError(hostname), '', 0);
        if (options.all) return callback(null, wanted);
        const first = wanted[0] as LookupAddress;
        callback(null, first.address, first.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, '', 0),
    );
  };
}
