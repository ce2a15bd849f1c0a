import * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';
import { HEX_HASH, HEX_HASH_TEXT } from './event-hash';

/*
 * RFC 9162 §2.1 Merkle trees (the hashing of RFC 6962, Certificate Transparency and Go's sumdb):
 *   empty tree  MTH({})   = SHA-256("")
 *   leaf        MTH({d})  = SHA-256(0x00 || d)
 *   interior    MTH(D[n]) = SHA-256(0x01 || MTH(D[0:k]) || MTH(D[k:n])), k the largest power of 2 < n
 *
 * What is stored is every *perfect* subtree, addressed by (level, index): the node covering leaves
 * [index·2^level, (index+1)·2^level). Every hash a proof needs is the root of a range of leaves
 * [begin, end) that splits into O(log n) perfect subtrees, so a proof is planned first (which
 * nodes, read in one query), then assembled from what was read. Pure functions over node:crypto.
 */

export const MERKLE_HASH_BYTES = 32;

/**
 * The lowest level of a tree that the database stores (migrations 1764300000000, 1764400000000):
 * below it a node covers at most two events and is derived from them where it is read, so an
 * append stores about half a node per event instead of two. Whole-chain verification holds the
 * stored levels against the events; the levels below are the events' own.
 */
export const LOWEST_STORED_LEVEL = 2;

/** A perfect subtree: leaves [index·2^level, (index+1)·2^level). Level 0 nodes are leaf hashes. */
export interface NodeId {
  level: number;
  index: number;
}

export interface MerkleNode extends NodeId {
  hash: Buffer;
}

/** A range of leaves [begin, end) whose RFC 9162 subtree hash is one element of a proof. */
export type LeafRange = readonly [begin: number, end: number];

/**
 * What a proof or root needs: `ranges` in output order, `nodes` to read for them. The ranges of a
 * plan are disjoint, so its nodes are distinct: each range's `rangeNodes` in turn, `counts[i]` of
 * them for range i.
 */
export interface MerklePlan {
  ranges: LeafRange[];
  nodes: NodeId[];
  counts: number[];
}

/** Reads stored perfect-subtree hashes, in the order asked (one batched query). */
export type NodeReader = (ids: readonly NodeId[]) => Promise<readonly Buffer[]>;

const LEAF_PREFIX = Buffer.from([0x00]);
const NODE_PREFIX = Buffer.from([0x01]);
const EMPTY_ROOT = createHash('sha256').digest();

/** SHA-256(""), the root of the empty tree. */
export function emptyRoot(): Buffer {
  return Buffer.from(EMPTY_ROOT);
}

/*
 * Whole-chain verification hashes about two Merkle nodes per event, so the 32-byte cases go
 * through one reused input buffer and node:crypto's one-shot hash() (Node ≥ 20.12; about 1.5×
 * a Hash object for inputs this small), falling back to createHash where it is missing.
 */
const oneShot = (crypto as { hash?: (algorithm: string, data: Uint8Array, encoding: 'binary') => string }).hash;
const scratch = Buffer.alloc(1 + 2 * MERKLE_HASH_BYTES);
const leafInput = scratch.subarray(0, 1 + MERKLE_HASH_BYTES);

/**
 * SHA-256 of `input` (when `oneShot` exists) as a Buffer of its own. hash() gives the digest as a
 * binary (latin1) string, a character a byte, copied here into a 32-byte Buffer small enough for
 * V8's heap: asked for a Buffer, hash() gives each digest an off-heap backing store, which costs
 * more than the hashing (two node hashes: about 2.7 µs against 1.1 on the bench machine).
 */
function digestOf(input: Uint8Array): Buffer {
  const text = oneShot!('sha256', input, 'binary');
  const digest = Buffer.alloc(MERKLE_HASH_BYTES);
  for (let i = 0; i < MERKLE_HASH_BYTES; i++) digest[i] = text.charCodeAt(i);
  return digest;
}

/** SHA-256(0x00 || data) */
export function leafHash(data: Uint8Array): Buffer {
  if (!oneShot || data.length !== MERKLE_HASH_BYTES)
    return createHash('sha256').update(LEAF_PREFIX).update(data).digest();
  scratch[0] = 0x00;
  scratch.set(data, 1);
  return digestOf(leafInput);
}

/** SHA-256(0x01 || left || right) */
export function nodeHash(left: Uint8Array, right: Uint8Array): Buffer {
  if (!oneShot || left.length !== MERKLE_HASH_BYTES || right.length !== MERKLE_HASH_BYTES)
    return createHash('sha256').update(NODE_PREFIX).update(left).update(right).digest();
  scratch[0] = 0x01;
  scratch.set(left, 1);
  scratch.set(right, 1 + MERKLE_HASH_BYTES);
  return digestOf(scratch);
}

/** The leaf hash of an event hash given as hex, without validating it (whole-chain verification's hot loop). */
export function leafHashOfHex(eventHashHex: string): Buffer {
  if (!oneShot || eventHashHex.length !== 2 * MERKLE_HASH_BYTES) return leafHash(Buffer.from(eventHashHex, 'hex'));
  scratch[0] = 0x00;
  if (scratch.write(eventHashHex, 1, 'hex') !== MERKLE_HASH_BYTES) return leafHash(Buffer.from(eventHashHex, 'hex'));
  return digestOf(leafInput);
}

/** The leaf hash of an event (docs/contract.md §10): its leaf data is the event hash, hex-decoded. */
export function eventLeafHash(eventHashHex: string): Buffer {
  if (!HEX_HASH.test(eventHashHex)) throw new RangeError(`an event hash is ${HEX_HASH_TEXT}`);
  return leafHash(Buffer.from(eventHashHex, 'hex'));
}

const isSize = (n: number): boolean => Number.isSafeInteger(n) && n >= 0;
const isLsbSet = (n: number): boolean => n % 2 === 1;
const half = (n: number): number => Math.floor(n / 2);

/** The largest power of 2 strictly below n (n ≥ 2): where RFC 9162 splits a tree of n leaves. */
export function splitPoint(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * The perfect subtrees whose hashes make the subtree hash of leaves [begin, end), largest first.
 * RFC 9162 subtrees always start at a multiple of a power of 2 at least as large as they are;
 * any other range has no subtree hash and is refused.
 */
export function rangeNodes(begin: number, end: number): NodeId[] {
  if (!isSize(begin) || !isSize(end) || begin >= end) throw new RangeError(`no leaves in [${begin}, ${end})`);
  if (begin % (end - begin > 1 ? splitPoint(end - begin) * 2 : 1) !== 0)
    throw new RangeError(`[${begin}, ${end}) is not a subtree of an RFC 9162 tree`);
  const ids: NodeId[] = [];
  for (let at = begin; at < end;) {
    let width = 1;
    let level = 0;
    while (at % (width * 2) === 0 && at + width * 2 <= end) {
      width *= 2;
      level++;
    }
    ids.push({ level, index: at / width });
    at += width;
  }
  return ids;
}

/** The stored nodes on the right edge of a tree of `size` leaves, left to right: what an append extends. */
export function frontierIds(size: number): NodeId[] {
  return size === 0 ? [] : rangeNodes(0, size);
}

/** The subtree hash of a range from the hashes of its `rangeNodes`, in that order. */
export function foldRange(hashes: readonly Buffer[]): Buffer {
  if (hashes.length === 0) throw new RangeError('a range has at least one node');
  let acc = hashes[hashes.length - 1]!;
  for (let i = hashes.length - 2; i >= 0; i--) acc = nodeHash(hashes[i]!, acc);
  return acc;
}

const nodeKey = (id: NodeId): string => `${id.level}/${id.index}`;

function planOf(ranges: LeafRange[]): MerklePlan {
  const nodes: NodeId[] = [];
  const counts = ranges.map(([begin, end]) => nodes.push(...rangeNodes(begin, end)));
  for (let i = counts.length - 1; i > 0; i--) counts[i]! -= counts[i - 1]!;
  return { ranges, nodes, counts };
}

/** The root of a tree of `size` ≥ 1 leaves. (The empty tree's root needs no node: `emptyRoot()`.) */
export function rootPlan(size: number): MerklePlan {
  if (!isSize(size) || size === 0) throw new RangeError('a root plan needs at least one leaf');
  return planOf([[0, size]]);
}

/** The hash of one perfect subtree (a leaf at level 0), as a plan of one range. */
export function nodePlan({ level, index }: NodeId): MerklePlan {
  if (!Number.isInteger(level) || level < 0 || level > 62 || !isSize(index) || !isSize((index + 1) * 2 ** level))
    throw new RangeError(`no node (${level}, ${index})`);
  return planOf([[index * 2 ** level, (index + 1) * 2 ** level]]);
}

/** RFC 9162 §2.1.3.1 (RFC 6962 PATH): the inclusion proof of leaf `index` in a tree of `size` leaves. */
export function inclusionPlan(index: number, size: number): MerklePlan {
  if (!isSize(index) || !isSize(size) || index >= size) throw new RangeError(`no leaf ${index} in a tree of ${size}`);
  const ranges: LeafRange[] = [];
  const path = (lo: number, hi: number): void => {
    if (hi - lo === 1) return;
    const k = splitPoint(hi - lo);
    if (index < lo + k) {
      path(lo, lo + k);
      ranges.push([lo + k, hi]);
    } else {
      path(lo + k, hi);
      ranges.push([lo, lo + k]);
    }
  };
  path(0, size);
  return planOf(ranges);
}

/**
 * RFC 9162 §2.1.4.1 (RFC 6962 PROOF/SUBPROOF): the consistency proof from a tree of `from` leaves to
 * one of `to`. Empty for from = 0 and from = to (trivially consistent, docs/contract.md §10).
 */
export function consistencyPlan(from: number, to: number): MerklePlan {
  if (!isSize(from) || !isSize(to) || from > to) throw new RangeError(`no consistency proof from ${from} to ${to}`);
  const ranges: LeafRange[] = [];
  const subproof = (lo: number, hi: number, whole: boolean): void => {
    if (from === hi) {
      if (!whole) ranges.push([lo, hi]);
      return;
    }
    const k = splitPoint(hi - lo);
    if (from <= lo + k) {
      subproof(lo, lo + k, whole);
      ranges.push([lo + k, hi]);
    } else {
      subproof(lo + k, hi, false);
      ranges.push([lo, lo + k]);
    }
  };
  if (from > 0 && from < to) subproof(0, to, true);
  return planOf(ranges);
}

/** The plan's hashes, in its range order, from the hashes of `plan.nodes` (in that order). */
export function assemble(plan: MerklePlan, nodeHashes: readonly Buffer[]): Buffer[] {
  if (nodeHashes.length !== plan.nodes.length)
    throw new RangeError(`the plan needs ${plan.nodes.length} node(s), ${nodeHashes.length} given`);
  let next = 0;
  return plan.counts.map((count) => foldRange(nodeHashes.slice(next, (next += count))));
}

/**
 * Several plans' hashes from the hashes of all their nodes read together, plan after plan in
 * order (a node two plans share, twice): result i is `plans[i]`'s.
 */
export function assembleAll(plans: readonly MerklePlan[], nodeHashes: readonly Buffer[]): Buffer[][] {
  const needed = plans.reduce((n, plan) => n + plan.nodes.length, 0);
  if (nodeHashes.length !== needed)
    throw new RangeError(`the plans need ${needed} node(s), ${nodeHashes.length} given`);
  let next = 0;
  return plans.map((plan) => assemble(plan, nodeHashes.slice(next, (next += plan.nodes.length))));
}

/** Reads a plan's nodes with one call to `read` and assembles it. */
export async function resolvePlan(plan: MerklePlan, read: NodeReader): Promise<Buffer[]> {
  return (await resolvePlans([plan], read))[0]!;
}

/**
 * Reads the nodes of several plans with one call to `read` (a node they share, once) and
 * assembles each: result i is `plans[i]`'s hashes. No call when no plan needs a node.
 */
export async function resolvePlans(plans: readonly MerklePlan[], read: NodeReader): Promise<Buffer[][]> {
  const wanted = new Map<string, NodeId>();
  for (const plan of plans) for (const id of plan.nodes) wanted.set(nodeKey(id), id);
  const ids = [...wanted.values()];
  const hashes = ids.length === 0 ? [] : await read(ids);
  if (hashes.length !== ids.length) throw new RangeError(`the plans need ${ids.length} node(s), ${hashes.length} read`);
  const byKey = new Map(ids.map((id, i) => [nodeKey(id), hashes[i]!]));
  return assembleAll(
    plans,
    plans.flatMap((plan) => plan.nodes.map((id) => byKey.get(nodeKey(id))!)),
  );
}

export const proveInclusion = (index: number, size: number, read: NodeReader): Promise<Buffer[]> =>
  resolvePlan(inclusionPlan(index, size), read);
export const proveConsistency = (from: number, to: number, read: NodeReader): Promise<Buffer[]> =>
  resolvePlan(consistencyPlan(from, to), read);

/**
 * The one push/merge step of every tree built leaf by leaf: pushes the perfect subtree `node` onto
 * `stack` (perfect subtrees left to right, each ending where the next begins: a tree's frontier, or
 * the maximal perfect subtrees of a run of leaves that need not start at 0) and merges it with the
 * top for as long as the top is its left sibling. `onNode` sees each parent so made, children first.
 */
export function pushNode(stack: MerkleNode[], node: MerkleNode, onNode?: (made: MerkleNode) => void): void {
  for (let top = stack[stack.length - 1]; top && isLeftSibling(top, node); top = stack[stack.length - 1]) {
    stack.pop();
    node = { level: node.level + 1, index: top.index / 2, hash: nodeHash(top.hash, node.hash) };
    onNode?.(node);
  }
  stack.push(node);
}

/**
 * What appending `leafHashes` to a tree of `size` leaves adds: every new perfect node (level 0 =
 * the leaf hashes themselves), in an order where children come before their parent, and the new
 * frontier. `frontier` is the stored nodes at `frontierIds(size)`, in that order.
 */
export function extendTree(
  size: number,
  frontier: readonly MerkleNode[],
  leafHashes: readonly Buffer[],
): { nodes: MerkleNode[]; frontier: MerkleNode[] } {
  const expected = frontierIds(size);
  if (frontier.length !== expected.length || expected.some((id, i) => !sameId(id, frontier[i]!)))
    throw new RangeError(`the frontier of a tree of ${size} is ${expected.map(formatId).join(', ') || 'empty'}`);
  const stack = [...frontier];
  const nodes: MerkleNode[] = [];
  const made = (node: MerkleNode): void => void nodes.push(node);
  leafHashes.forEach((hash, i) => {
    const leaf: MerkleNode = { level: 0, index: size + i, hash };
    nodes.push(leaf);
    pushNode(stack, leaf, made);
  });
  return { nodes, frontier: stack };
}

/** The root of the tree whose frontier this is (the empty tree's for none). */
export function rootFromFrontier(frontier: readonly MerkleNode[]): Buffer {
  return frontier.length === 0 ? emptyRoot() : foldRange(frontier.map((n) => n.hash));
}

/** The root over leaf hashes, in O(log n) memory. */
export function merkleRoot(leafHashes: Iterable<Buffer>): Buffer {
  const stack: MerkleNode[] = [];
  let index = 0;
  for (const hash of leafHashes) pushNode(stack, { level: 0, index: index++, hash });
  return rootFromFrontier(stack);
}

const isLeftSibling = (left: NodeId, right: NodeId): boolean =>
  left.level === right.level && left.index % 2 === 0 && left.index + 1 === right.index;
const sameId = (a: NodeId, b: NodeId): boolean => a.level === b.level && a.index === b.index;
const formatId = (id: NodeId): string => `(${id.level}, ${id.index})`;
const isHash = (h: Uint8Array): boolean => h.length === MERKLE_HASH_BYTES;
const equal = (a: Uint8Array, b: Uint8Array): boolean => Buffer.compare(a, b) === 0;

/**
 * RFC 9162 §2.1.3.2: the root an inclusion proof leads to, or null when the proof cannot be
 * one for leaf `index` of a tree of `size` (wrong length, index out of range, bad hash size).
 */
export function rootFromInclusionProof(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
): Buffer | null {
  if (!isSize(index) || !isSize(size) || index >= size || !isHash(leaf) || !proof.every(isHash)) return null;
  let fn = index;
  let sn = size - 1;
  let r: Buffer = Buffer.from(leaf);
  for (const p of proof) {
    if (sn === 0) return null;
    if (isLsbSet(fn) || fn === sn) {
      r = nodeHash(p, r);
      while (!isLsbSet(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      r = nodeHash(r, p);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 ? r : null;
}

/** RFC 9162 §2.1.3.2: does `proof` show leaf hash `leaf` at `index` in the tree of `size` with `root`? */
export function verifyInclusion(
  index: number,
  size: number,
  leaf: Uint8Array,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  const computed = rootFromInclusionProof(index, size, leaf, proof);
  return computed !== null && isHash(root) && equal(computed, root);
}

/**
 * RFC 9162 §2.1.4.2: does `proof` show the tree of `from` leaves with `fromRoot` to be a prefix of
 * the tree of `to` leaves with `toRoot`? For from = to the proof is empty and the roots equal; for
 * from = 0 the proof is empty and `fromRoot` is the empty tree's root (docs/contract.md §10).
 */
export function verifyConsistency(
  from: number,
  to: number,
  fromRoot: Uint8Array,
  toRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!isSize(from) || !isSize(to) || from > to || !isHash(fromRoot) || !isHash(toRoot) || !proof.every(isHash))
    return false;
  if (from === 0) return proof.length === 0 && equal(fromRoot, EMPTY_ROOT);
  if (from === to) return proof.length === 0 && equal(fromRoot, toRoot);
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(from) ? [fromRoot, ...proof] : [...proof];
  let fn = from - 1;
  let sn = to - 1;
  while (isLsbSet(fn)) {
    fn = half(fn);
    sn = half(sn);
  }
  let fr: Buffer = Buffer.from(path[0]!);
  let sr: Buffer = Buffer.from(path[0]!);
  for (const c of path.slice(1)) {
    if (sn === 0) return false;
    if (isLsbSet(fn) || fn === sn) {
      fr = nodeHash(c, fr);
      sr = nodeHash(c, sr);
      while (!isLsbSet(fn) && fn !== 0) {
        fn = half(fn);
        sn = half(sn);
      }
    } else {
      sr = nodeHash(sr, c);
    }
    fn = half(fn);
    sn = half(sn);
  }
  return sn === 0 && equal(fr, fromRoot) && equal(sr, toRoot);
}

function isPowerOfTwo(n: number): boolean {
  let k = 1;
  while (k < n) k *= 2;
  return k === n;
}
