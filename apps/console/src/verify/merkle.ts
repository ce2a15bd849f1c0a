import { sha256 } from './bytes';

/*
 * RFC 9162 §2.1: leaf = SHA-256(0x00 || data), node = SHA-256(0x01 || left || right); the leaf data
 * of an event is its 32-byte hash (docs/contract.md §10).
 */
const LEAF = new Uint8Array([0x00]);
const NODE = new Uint8Array([0x01]);

export const leafHash = (data: Uint8Array): Promise<Uint8Array> => sha256(LEAF, data);
export const nodeHash = (left: Uint8Array, right: Uint8Array): Promise<Uint8Array> => sha256(NODE, left, right);

/**
 * The root an inclusion proof leads to (RFC 9162 §2.1.3.2), or null when the proof cannot be one
 * for that leaf index and tree size. Sizes go up to 2^53, so halving is arithmetic, not `>>`.
 */
export async function rootFromInclusionProof(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
): Promise<Uint8Array | null> {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return null;
  let fn = index;
  let sn = size - 1;
  let r = leaf;
  for (const p of proof) {
    if (sn === 0) return null;
    if (fn % 2 === 1 || fn === sn) {
      r = await nodeHash(p, r);
      if (fn % 2 === 0) {
        while (fn % 2 === 0 && fn !== 0) {
          fn = Math.floor(fn / 2);
          sn = Math.floor(sn / 2);
        }
      }
    } else {
      r = await nodeHash(r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 ? r : null;
}
