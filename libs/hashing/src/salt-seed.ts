import { hash, randomFillSync } from 'node:crypto';
import { computeEventHash, EventHashPayload } from './event-hash';
import {
  computeEventHashV2,
  erasedFields,
  FieldSecrets,
  HashingV2,
  HashingV2Error,
  hashUnerasedV2,
} from './event-hash-v2';

/**
 * Where a version-2 event's salts come from (docs/hashing.md, "Version 2"; docs/contract.md §17).
 *
 * Each personal field of each event has its own 128-bit salt. The service draws 16 random bytes per
 * event (the seed) and derives each field's salt as the first 16 bytes of
 * SHA-256(seed ‖ 0x00 ‖ UTF-8(path)), `path` the field's path (`actor`, `resource`, `context.<m>`):
 * the event's salts cost 17 bytes on disk instead of 17 a field. The seed is secret (never served),
 * so each salt is as unpredictable as a drawn one to whoever lacks it; a served salt is half a
 * digest, so nothing extends it to another path's (no length extension through a truncated digest),
 * and it is a fifth of HMAC's cost (measured: 0.4 µs a field against 2.2). An erasure deletes the
 * seed, keeping the remaining fields' salts as they are: the erased field's salt then exists nowhere,
 * and cannot be derived from the others.
 */
export const SALT_SEED_BYTES = 16;

/** The fields a version-2 event commits to, as their hashed values are held. */
export interface PersonalFields {
  actor: string | null;
  resource: string | null;
  context: Record<string, unknown> | null;
}

/** Random bytes drawn from the operating system 4 KiB at a time: a seed per event costs a copy, not a system call. */
const pool = Buffer.alloc(4096);
let used = pool.length;

/** 16 bytes from the operating system's random source, as 32 lowercase hex characters. */
export function newSaltSeed(): string {
  if (used + SALT_SEED_BYTES > pool.length) {
    randomFillSync(pool);
    used = 0;
  }
  const seed = pool.toString('hex', used, used + SALT_SEED_BYTES);
  // Each byte serves once: what was handed out is overwritten before the pool is drawn from again.
  pool.fill(0, used, used + SALT_SEED_BYTES);
  used += SALT_SEED_BYTES;
  return seed;
}

/** The salt of the field at `path` (`actor`, `resource`, `context.<m>`) under `prefix` (seed ‖ 0x00): 32 lowercase hex characters. */
function derivedSalt(prefix: Buffer, path: string): string {
  return hash('sha256', Buffer.concat([prefix, Buffer.from(path, 'utf8')]), 'hex').slice(0, 32);
}

/** Where a path starts in SCRATCH, after seed ‖ 0x00. */
const PATH_AT = SALT_SEED_BYTES + 1;
/** Bytes of path SCRATCH holds: a path of up to 64 UTF-16 code units (3 UTF-8 bytes each at most). */
const PATH_ROOM = 3 * 64;
/** seed ‖ 0x00 ‖ path of the salt being derived (this thread's; written and hashed synchronously). */
const SCRATCH = Buffer.alloc(PATH_AT + PATH_ROOM);
/** SCRATCH's first PATH_AT + n bytes, made once per length: a view per salt cost as much as its hash. */
const VIEWS: Buffer[] = [];
/** Which salter's seed SCRATCH holds: a salter whose seed was overwritten writes it again. */
let holder = 0;

/**
 * The salt of each path under one seed (hex): seed ‖ 0x00 written once into SCRATCH, each path
 * after it, so that a salt costs one SHA-256 call and no allocation (derivedSalt's three buffers a
 * field cost as much as the hash). A longer path, or a seed that is not 32 hex characters, takes
 * derivedSalt: the same bytes are hashed either way.
 */
function salter(seedHex: string): (path: string) => string {
  const prefix = () => Buffer.concat([Buffer.from(seedHex, 'hex'), Buffer.from([0])]);
  const me = ++holder;
  const written = seedHex.length === 2 * SALT_SEED_BYTES ? SCRATCH.write(seedHex, 0, 'hex') : 0;
  if (written !== SALT_SEED_BYTES) return (path) => derivedSalt(prefix(), path);
  SCRATCH[SALT_SEED_BYTES] = 0;
  return (path) => {
    if (path.length * 3 > PATH_ROOM) return derivedSalt(prefix(), path);
    if (holder !== me) {
      SCRATCH.write(seedHex, 0, 'hex');
      holder = me;
    }
    const n = SCRATCH.write(path, PATH_AT, 'utf8');
    const view = (VIEWS[n] ??= SCRATCH.subarray(0, PATH_AT + n));
    return hash('sha256', view, 'hex').slice(0, 32);
  };
}

/** The salts of every field of `event` that holds a value, derived from its seed (hex). */
export function deriveSalts(seedHex: string, event: PersonalFields): FieldSecrets {
  const salt = salter(seedHex);
  const salts: FieldSecrets = {};
  if (event.actor !== null) salts.actor = salt('actor');
  if (event.resource !== null) salts.resource = salt('resource');
  // fromEntries defines own properties, so a member named "__proto__" stays a member (refused on input; an altered row may hold it).
  if (event.context !== null)
    salts.context = Object.fromEntries(Object.keys(event.context).map((m) => [m, salt(`context.${m}`)]));
  return salts;
}

/**
 * The version-2 hash of an event that keeps every field, from its seed: exactly
 * computeEventHashV2(event, { version: 2, salts: deriveSalts(seedHex, event), commitments: {} }),
 * each salt derived as its commitment is made (hashUnerasedV2), without the salts' object.
 */
export function seededEventHashV2(event: EventHashPayload, seedHex: string): string {
  return (
    hashUnerasedV2(event, salter(seedHex)) ??
    computeEventHashV2(event, { version: 2, salts: deriveSalts(seedHex, event), commitments: {} })
  );
}

/** A stored event's hashing secrets: the seed until an erasure, then what the erasure kept. */
export interface StoredSecrets {
  saltSeed: string | null;
  erasure: { salts: FieldSecrets; commitments: FieldSecrets } | null;
}

/** The hashing of a stored event: null for version 1 (neither a seed nor an erasure). */
export function hashingOf(event: PersonalFields & StoredSecrets): HashingV2 | null {
  if (event.erasure !== null) return { version: 2, salts: event.erasure.salts, commitments: event.erasure.commitments };
  if (event.saltSeed !== null) return { version: 2, salts: deriveSalts(event.saltSeed, event), commitments: {} };
  return null;
}

/**
 * A stored event's hash recomputed by its own rule: version 2 with its secrets, else version 1 (§3).
 * Null when its fields and secrets determine no hash (a value beside its kept commitment, a value
 * without a salt: only an altered row is so); verification reports that as an altered event.
 */
export function recomputeStoredHash(event: EventHashPayload & StoredSecrets): string | null {
  const seed = event.erasure === null ? event.saltSeed : null;
  if (seed !== null) return orNull(() => seededEventHashV2(event, seed));
  return hashByVersion(event, hashingOf(event));
}

/**
 * An event's hash by its version: §3's rule without a hashing, version 2's with one; null when the
 * event and its hashing determine no hash. The one dispatch every verifier of this code uses (the
 * service's reads, recomputeStoredHash; the CLI's verify-export, with export.hashing).
 */
export function hashByVersion(event: EventHashPayload, hashing: HashingV2 | null): string | null {
  if (hashing === null) return computeEventHash(event);
  return orNull(() => computeEventHashV2(event, hashing));
}

/** A version-2 hash, or null when the event and its secrets determine none (HashingV2Error). */
function orNull(hashed: () => string): string | null {
  try {
    return hashed();
  } catch (error) {
    if (error instanceof HashingV2Error) return null;
    throw error;
  }
}

/**
 * What a stored event's `erased` shows (erasedFields): the fields an erasure kept commitments for,
 * [] on a version-2 event that keeps every field, null on a version-1 event (as hashingOf is null).
 * Derives no salt: a verification's answer needs none.
 */
export function storedErasedFields(event: StoredSecrets): string[] | null {
  if (event.erasure !== null) return erasedFields({ version: 2, ...event.erasure });
  return event.saltSeed !== null ? [] : null;
}
