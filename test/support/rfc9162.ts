import { createHash } from 'node:crypto';

/*
 * RFC 9162 §2.1.1 written from the RFC's recursive definition, sharing no code with
 * libs/hashing/src/merkle.ts, so that e2e tests compute roots independently of the service:
 *   MTH({})      = SHA-256()
 *   MTH({d(0)})  = SHA-256(0x00 || d(0))
 *   MTH(D[n])    = SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n])), k the largest power of two < n
 * Leaf data is each event's 32-byte hash (docs/contract.md §10).
 */
const sha256 = (...parts: Buffer[]): Buffer => {
  const h = createHash('sha256');
  for (const p of parts) h.update(p);
  return h.digest();
};

function mth(leaves: readonly Buffer[]): Buffer {
  if (leaves.length === 0) return sha256();
  if (leaves.length === 1) return sha256(Buffer.from([0]), leaves[0]!);
  let k = 1;
  while (k * 2 < leaves.length) k *= 2;
  return sha256(Buffer.from([1]), mth(leaves.slice(0, k)), mth(leaves.slice(k)));
}

/** The Merkle root (hex) of events whose hashes (hex) are given in position order. */
export function independentRoot(eventHashes: readonly string[]): string {
  return mth(eventHashes.map((h) => Buffer.from(h, 'hex'))).toString('hex');
}
