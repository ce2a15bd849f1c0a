import { createHmac, randomBytes } from 'node:crypto';
import { computeEventHash, EventHashPayload } from './event-hash';
import { computeEventHashV2, FieldSecrets, HashingV2 } from './event-hash-v2';

/**
 * Where a version-2 event's salts come from (docs/hashing.md, "Version 2"; docs/contract.md §17).
 *
 * Each personal field of each event has its own 128-bit salt. The service draws 16 random bytes per
 * event (the seed) and derives each field's salt as the first 16 bytes of HMAC-SHA-256(seed, path),
 * `path` the field's path (`actor`, `resource`, `context.<m>`): the event's salts cost 17 bytes on
 * disk instead of 17 a field, and each is as unpredictable as a drawn one to whoever lacks the seed.
 * The salts are served with the event; the seed never is. An erasure deletes the seed, keeping the
 * remaining fields' salts as they are: the erased field's salt then exists nowhere, and cannot be
 * derived from the others (HMAC is one-way in its key).
 */
export const SALT_SEED_BYTES = 16;

/** The fields a version-2 event commits to, as their hashed values are held. */
export interface PersonalFields {
  actor: string | null;
  resource: string | null;
  context: Record<string, unknown> | null;
}

/** 16 bytes from the operating system's random source, as 32 lowercase hex characters. */
export function newSaltSeed(): string {
  return randomBytes(SALT_SEED_BYTES).toString('hex');
}

/** The salt of the field at `path` (`actor`, `resource`, `context.<m>`): 32 lowercase hex characters. */
export function derivedSalt(seed: Buffer, path: string): string {
  return createHmac('sha256', seed).update(path, 'utf8').digest('hex').slice(0, 32);
}

/** The salts of every field of `event` that holds a value, derived from its seed (hex). */
export function deriveSalts(seedHex: string, event: PersonalFields): FieldSecrets {
  const seed = Buffer.from(seedHex, 'hex');
  const salts: FieldSecrets = {};
  if (event.actor !== null) salts.actor = derivedSalt(seed, 'actor');
  if (event.resource !== null) salts.resource = derivedSalt(seed, 'resource');
  if (event.context !== null) {
    const context: Record<string, string> = {};
    for (const member of Object.keys(event.context)) context[member] = derivedSalt(seed, `context.${member}`);
    salts.context = context;
  }
  return salts;
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

/** A stored event's hash recomputed by its own rule: version 2 with its secrets, else version 1 (§3). */
export function recomputeStoredHash(event: EventHashPayload & StoredSecrets): string {
  const hashing = hashingOf(event);
  return hashing === null ? computeEventHash(event) : computeEventHashV2(event, hashing);
}
