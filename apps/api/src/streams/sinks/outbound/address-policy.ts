import { BlockList, isIP } from 'node:net';

/**
 * Addresses a destination may not reach unless STREAM_ALLOW_PRIVATE_NETWORKS (docs/contract.md §16 "Where it
 * may send"): anyone who may create a destination must not reach the service's own network or the
 * cloud metadata endpoint through it. BlockList also matches IPv4-mapped IPv6 (::ffff:127.0.0.1).
 */
const FORBIDDEN = new BlockList();
const IPV4: [string, number][] = [
  ['0.0.0.0', 8], // unspecified, "this network"
  ['10.0.0.0', 8], // private
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local, 169.254.169.254 metadata included
  ['172.16.0.0', 12], // private
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16], // private
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast included
];
const IPV6: [string, number][] = [
  ['::', 96], // unspecified, loopback, IPv4-compatible (deprecated)
  ['64:ff9b::', 96], // NAT64: reaches whatever IPv4 address it embeds
  ['fc00::', 7], // unique-local, fd00:ec2::254 metadata included
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
];
for (const [network, prefix] of IPV4) FORBIDDEN.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of IPV6) FORBIDDEN.addSubnet(network, prefix, 'ipv6');

/** True when `address` (an IP literal) is one a destination may not reach without allowPrivateNetworks. */
export function isForbiddenAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 0) return true; // not an address: nothing to connect to
  return FORBIDDEN.check(address, family === 4 ? 'ipv4' : 'ipv6');
}

/** Thrown (and turned into `ok: false`) when every address of a host is forbidden. */
export class AddressNotAllowedError extends Error {
  readonly code = 'ERR_SINK_ADDRESS_NOT_ALLOWED';

  constructor(host: string) {
    super(`the address of ${host} is not allowed (loopback, private or metadata network)`);
    this.name = 'AddressNotAllowedError';
  }
}
