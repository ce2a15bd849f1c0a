import { KeyObject, sign, verify } from 'node:crypto';
import {
  ed25519PublicKeyBytes,
  formatSignatureLine,
  formatVerifierKey,
  isValidKeyName,
  noteKeyId,
  NoteFormatError,
  NoteVerifier,
  parseNote,
  parseSignatureLine,
  parseVerifierKey,
} from './signed-note';

/*
 * Witness cosignatures, c2sp.org/tlog-cosignature's Ed25519 type (cosignature/v1), over the
 * signed-note primitives of signed-note.ts. Pure functions over node:crypto; no I/O.
 *
 *   key id    = SHA-256(name || 0x0A || 0x04 || public-key[32])[:4]
 *   vkey      = name "+" hex(key id) "+" base64(0x04 || public-key[32])
 *   line      = "— " name " " base64(key id[4] || timestamp[8, big-endian] || ed25519-signature[64]) "\n"
 *   message   = "cosignature/v1\n" "time " decimal(timestamp) "\n" || the whole note text
 *               (the checkpoint body with its extension lines, without any signature line)
 *
 * The timestamp (POSIX seconds) is what the witness asserts: as of that time, this is the largest
 * consistent tree it has seen for the origin. Its key id differs from a plain note key's (type
 * 0x04, not 0x01), so verifyNote() with log keys ignores cosignature lines and vice versa.
 */
export const COSIGNATURE_V1_TYPE = 0x04;
const HEADER = 'cosignature/v1\n';
const MAX_TIMESTAMP = 2n ** 63n - 1n;
const BLOB_BYTES = 4 + 8 + 64;

export interface Cosignature {
  name: string;
  keyId: Buffer;
  /** POSIX seconds. */
  time: number;
  signature: Buffer;
}

/** SHA-256(name || 0x0A || 0x04 || public key)[:4] */
export function cosignatureKeyId(name: string, publicKey: Uint8Array): Buffer {
  return noteKeyId(name, publicKey, COSIGNATURE_V1_TYPE);
}

/** `<name>+<hex key id>+<base64(0x04 || public key)>`: the key a log or client configures for a witness. */
export function formatCosignatureVerifierKey(name: string, key: KeyObject): string {
  return formatVerifierKey(name, key, COSIGNATURE_V1_TYPE);
}

/** Parses a cosignature/v1 verifier key; throws NoteFormatError when malformed or not of type 0x04. */
export function parseCosignatureVerifierKey(vkey: string): NoteVerifier {
  return parseVerifierKey(vkey, COSIGNATURE_V1_TYPE);
}

/** The bytes an Ed25519 cosignature/v1 signs. */
export function cosignatureMessage(noteText: string, time: number): Buffer {
  assertTime(time);
  assertBody(noteText);
  return Buffer.from(`${HEADER}time ${time}\n${noteText}`, 'utf8');
}

/**
 * The cosignature line (ending in a newline) of `name`'s key over a note's text — the checkpoint
 * body without signature lines — at `time` (POSIX seconds).
 */
export function cosign(noteText: string, signingKey: KeyObject, name: string, time: number): string {
  if (!isValidKeyName(name)) throw new NoteFormatError(`invalid key name '${name}'`);
  const message = cosignatureMessage(noteText, time);
  const timestamp = Buffer.alloc(8);
  timestamp.writeBigUInt64BE(BigInt(time));
  const keyId = cosignatureKeyId(name, ed25519PublicKeyBytes(signingKey));
  return formatSignatureLine(name, Buffer.concat([keyId, timestamp, sign(null, message, signingKey)]));
}

/** Parses one cosignature line (with or without its newline), checking the syntax only. */
export function parseCosignatureLine(line: string): Cosignature {
  const { name, keyId, signature: rest } = parseSignatureLine(line.endsWith('\n') ? line.slice(0, -1) : line);
  if (4 + rest.length !== BLOB_BYTES)
    throw new NoteFormatError('a cosignature/v1 is a key id, an 8-byte timestamp and a 64-byte Ed25519 signature');
  const timestamp = rest.readBigUInt64BE(0);
  if (timestamp > MAX_TIMESTAMP) throw new NoteFormatError('a cosignature timestamp must not exceed 2^63 - 1');
  if (timestamp > BigInt(Number.MAX_SAFE_INTEGER)) throw new NoteFormatError('the cosignature timestamp is too large');
  return { name, keyId, time: Number(timestamp), signature: rest.subarray(8) };
}

export type CosignatureVerification =
  | { ok: true; name: string; time: number }
  | { ok: false; reason: 'malformed' | 'other-key' | 'bad-signature'; message: string };

/**
 * Does `line` carry a valid cosignature/v1 of `verifierKey` (a vkey or a parsed one) over
 * `noteText` (the note's text, without signature lines)? A line from another name or key id is
 * `other-key` (clients ignore those); one from this key that does not verify is `bad-signature`.
 */
export function verifyCosignature(
  noteText: string,
  line: string,
  verifierKey: string | NoteVerifier,
): CosignatureVerification {
  let cosignature: Cosignature;
  let verifier: NoteVerifier;
  let message: Buffer;
  try {
    verifier = typeof verifierKey === 'string' ? parseCosignatureVerifierKey(verifierKey) : verifierKey;
    cosignature = parseCosignatureLine(line);
    message = cosignatureMessage(noteText, cosignature.time);
  } catch (error) {
    if (error instanceof NoteFormatError) return { ok: false, reason: 'malformed', message: error.message };
    throw error;
  }
  const id = `${verifier.name}+${verifier.keyId.toString('hex')}`;
  if (cosignature.name !== verifier.name || !cosignature.keyId.equals(verifier.keyId))
    return { ok: false, reason: 'other-key', message: `the line is not a cosignature by ${id}` };
  if (!verify(null, message, verifier.publicKey, cosignature.signature))
    return { ok: false, reason: 'bad-signature', message: `the cosignature by ${id} does not verify` };
  return { ok: true, name: verifier.name, time: cosignature.time };
}

export interface VerifiedCosignature {
  /** `<name>+<hex key id>` of the witness key. */
  witness: string;
  time: number;
  /** The signature line itself, newline included. */
  line: string;
}

/**
 * The valid cosignatures that a signed note (a checkpoint with signature lines) carries from
 * `witnesses`, one per witness key at most. Lines from other keys are ignored; a line from a
 * listed key that does not verify is left out too (it is no cosignature: the spec's clients
 * ignore it rather than reject the checkpoint, whose log signature is checked separately).
 */
export function verifiedCosignatures(note: string, witnesses: readonly NoteVerifier[]): VerifiedCosignature[] {
  const { text } = parseNote(note);
  const lines = note.slice(text.length + 1, -1).split('\n');
  const found = new Map<string, VerifiedCosignature>();
  for (const line of lines) {
    for (const witness of witnesses) {
      const result = verifyCosignature(text, line, witness);
      const id = `${witness.name}+${witness.keyId.toString('hex')}`;
      if (result.ok && !found.has(id)) found.set(id, { witness: id, time: result.time, line: `${line}\n` });
    }
  }
  return [...found.values()];
}

function assertTime(time: number): void {
  if (!Number.isSafeInteger(time) || time < 0)
    throw new NoteFormatError('a cosignature time is a non-negative integer number of seconds');
}

function assertBody(noteText: string): void {
  if (noteText.length === 0 || !noteText.endsWith('\n') || noteText.includes('\n\n'))
    throw new NoteFormatError('the cosigned text is a note body: non-empty lines, each ending in a newline');
}
