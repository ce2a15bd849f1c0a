import { createHash, createPrivateKey, createPublicKey, KeyObject, sign, verify } from 'node:crypto';

/*
 * C2SP signed notes (c2sp.org/signed-note) with Ed25519 signatures, and the tlog-checkpoint body
 * (c2sp.org/tlog-checkpoint). Pure functions over node:crypto; no I/O.
 *
 *   note      = text "\n" signature-line+          (text ends in "\n"; the blank line separates)
 *   signature = "— " key-name " " base64(key-id[4] || ed25519-signature[64]) "\n"
 *   key id    = SHA-256(key-name || 0x0A || 0x01 || public-key[32])[:4]
 *   vkey      = key-name "+" hex(key-id) "+" base64(0x01 || public-key[32])
 *
 * The key id and vkey take the signature type as a parameter (default 0x01, a plain Ed25519 note
 * signature) so that cosignature.ts can reuse them for c2sp.org/tlog-cosignature's type 0x04.
 */

export const ED25519_SIGNATURE_TYPE = 0x01;
/** Verifiers must accept at least 16; we refuse notes with more than this many. */
export const MAX_NOTE_SIGNATURES = 100;
/** A checkpoint is a few hundred bytes; anything this large is not one of ours. */
export const MAX_NOTE_BYTES = 64 * 1024;

const EM_DASH_PREFIX = '\u2014 ';
const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_ED25519_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const FORBIDDEN_CONTROL = /[\u0000-\u0009\u000b-\u001f]/;
const UNICODE_SPACE = /[\s\u0085\u180e]/u;

export class NoteFormatError extends Error {
  override readonly name = 'NoteFormatError';
}

export interface NoteSigner {
  name: string;
  privateKey: KeyObject;
}

export interface NoteVerifier {
  name: string;
  keyId: Buffer;
  publicKey: KeyObject;
}

/** Strict RFC 4648 §4 base64 (padding required, no whitespace), or null. */
export function decodeBase64(text: string): Buffer | null {
  return BASE64.test(text) ? Buffer.from(text, 'base64') : null;
}

export function isValidKeyName(name: string): boolean {
  return (
    name.length > 0 &&
    !name.includes('+') &&
    !UNICODE_SPACE.test(name) &&
    !FORBIDDEN_CONTROL.test(name) &&
    !name.includes('\n')
  );
}

export function ed25519PublicKeyBytes(key: KeyObject): Buffer {
  const der = (key.type === 'private' ? createPublicKey(key) : key).export({ format: 'der', type: 'spki' });
  if (der.length !== 44 || !der.subarray(0, 12).equals(SPKI_ED25519_PREFIX))
    throw new NoteFormatError('not an Ed25519 key');
  return der.subarray(12);
}

export function ed25519PublicKeyFromBytes(raw: Uint8Array): KeyObject {
  if (raw.length !== 32) throw new NoteFormatError('an Ed25519 public key is 32 bytes');
  return createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
}

/** RFC 8032 private key from its 32-byte seed. */
export function ed25519PrivateKeyFromSeed(seed: Uint8Array): KeyObject {
  if (seed.length !== 32) throw new NoteFormatError('an Ed25519 seed is 32 bytes');
  return createPrivateKey({ key: Buffer.concat([PKCS8_ED25519_PREFIX, seed]), format: 'der', type: 'pkcs8' });
}

/** SHA-256(name || 0x0A || type || public key)[:4], type 0x01 for a plain Ed25519 note signature */
export function noteKeyId(name: string, publicKey: Uint8Array, type: number = ED25519_SIGNATURE_TYPE): Buffer {
  const digest = createHash('sha256')
    .update(Buffer.from(name, 'utf8'))
    .update(Buffer.from([0x0a, type]))
    .update(publicKey)
    .digest();
  return digest.subarray(0, 4);
}

/** `<name>+<hex key id>+<base64(type || public key)>` */
export function formatVerifierKey(name: string, key: KeyObject, type: number = ED25519_SIGNATURE_TYPE): string {
  if (!isValidKeyName(name)) throw new NoteFormatError(`invalid key name '${name}'`);
  const raw = ed25519PublicKeyBytes(key);
  const typed = Buffer.concat([Buffer.from([type]), raw]);
  return `${name}+${noteKeyId(name, raw, type).toString('hex')}+${typed.toString('base64')}`;
}

/**
 * Parses a verifier key of signature type `type` (an Ed25519 key either way); throws
 * NoteFormatError when it is malformed, of another type, or its key id is wrong.
 */
export function parseVerifierKey(vkey: string, type: number = ED25519_SIGNATURE_TYPE): NoteVerifier {
  // The base64 key may itself contain '+': split at the first two only.
  const match = /^([^+]*)\+([^+]*)\+(.*)$/s.exec(vkey.trim());
  if (!match) throw new NoteFormatError('a verifier key is <name>+<hex key id>+<base64 key>');
  const [, name = '', idHex = '', keyText = ''] = match;
  if (!isValidKeyName(name)) throw new NoteFormatError('the verifier key has an invalid name');
  if (!/^[0-9a-f]{8}$/.test(idHex)) throw new NoteFormatError('the verifier key id must be 8 lowercase hex digits');
  const typed = decodeBase64(keyText);
  if (!typed || typed.length !== 33 || typed[0] !== type) {
    const hexType = `0x${type.toString(16).padStart(2, '0')}`;
    throw new NoteFormatError(`the verifier key must be base64 of ${hexType} followed by a 32-byte Ed25519 public key`);
  }
  const raw = typed.subarray(1);
  const keyId = noteKeyId(name, raw, type);
  if (keyId.toString('hex') !== idHex)
    throw new NoteFormatError('the verifier key id does not match its name and public key');
  return { name, keyId, publicKey: ed25519PublicKeyFromBytes(raw) };
}

/** Signs `text` (which must end in a newline) and returns the whole note. */
export function signNote(text: string, signer: NoteSigner): string {
  assertNoteText(text);
  if (!isValidKeyName(signer.name)) throw new NoteFormatError(`invalid key name '${signer.name}'`);
  const keyId = noteKeyId(signer.name, ed25519PublicKeyBytes(signer.privateKey));
  const signature = sign(null, Buffer.from(text, 'utf8'), signer.privateKey);
  return `${text}\n${formatSignatureLine(signer.name, Buffer.concat([keyId, signature]))}`;
}

/** `— <key name> <base64(blob)>\n`, blob being the key id and the signature. */
export function formatSignatureLine(name: string, blob: Uint8Array): string {
  return `${EM_DASH_PREFIX}${name} ${Buffer.from(blob).toString('base64')}\n`;
}

export interface NoteSignature {
  name: string;
  keyId: Buffer;
  signature: Buffer;
}

export interface ParsedNote {
  text: string;
  signatures: NoteSignature[];
}

/** Splits a note into its text and signature lines, checking the syntax only. */
export function parseNote(note: string | Uint8Array): ParsedNote {
  const source = typeof note === 'string' ? note : decodeUtf8(note);
  if (Buffer.byteLength(source, 'utf8') > MAX_NOTE_BYTES)
    throw new NoteFormatError(`a note must be at most ${MAX_NOTE_BYTES} bytes`);
  if (FORBIDDEN_CONTROL.test(source))
    throw new NoteFormatError('a note must not contain control characters other than newline');
  const split = source.lastIndexOf('\n\n');
  if (split < 0 || !source.endsWith('\n'))
    throw new NoteFormatError('a note is text, a blank line and signature lines, ending in a newline');
  const text = source.slice(0, split + 1);
  const lines = source.slice(split + 2, -1).split('\n');
  if (lines.length > MAX_NOTE_SIGNATURES)
    throw new NoteFormatError(`a note may carry at most ${MAX_NOTE_SIGNATURES} signatures`);
  // Line numbers as an editor shows them: the text's lines, the blank line, then the signatures.
  const first = text.split('\n').length + 1;
  return {
    text,
    signatures: lines.map((line, i) => {
      try {
        return parseSignatureLine(line);
      } catch (error) {
        if (!(error instanceof NoteFormatError)) throw error;
        const shown = line.length > 40 ? `${line.slice(0, 40)}…` : line;
        throw new NoteFormatError(`line ${first + i} (${JSON.stringify(shown)}): ${error.message}`);
      }
    }),
  };
}

/** Parses one signature line (without its newline), checking the syntax only. */
export function parseSignatureLine(line: string): NoteSignature {
  if (!line.startsWith(EM_DASH_PREFIX))
    throw new NoteFormatError('a signature line starts with an em dash and a space');
  const rest = line.slice(EM_DASH_PREFIX.length);
  const space = rest.lastIndexOf(' ');
  const name = rest.slice(0, space);
  const blob = space > 0 ? decodeBase64(rest.slice(space + 1)) : null;
  if (!isValidKeyName(name) || !blob || blob.length < 5)
    throw new NoteFormatError('a signature line is "— <key name> <base64(key id || signature)>"');
  return { name, keyId: blob.subarray(0, 4), signature: blob.subarray(4) };
}

export type NoteVerification =
  | { ok: true; text: string; verifiedBy: string[] }
  | { ok: false; reason: 'malformed' | 'bad-signature' | 'no-known-signature'; message: string };

/**
 * The spec's rules: signatures from unknown keys (name and key id not both matching) are
 * ignored; a signature from a known key that fails rejects the whole note; at least one known
 * signature must verify.
 */
export function verifyNote(note: string | Uint8Array, verifiers: readonly NoteVerifier[]): NoteVerification {
  let parsed: ParsedNote;
  try {
    parsed = parseNote(note);
  } catch (error) {
    if (error instanceof NoteFormatError) return { ok: false, reason: 'malformed', message: error.message };
    throw error;
  }
  const message = Buffer.from(parsed.text, 'utf8');
  const verifiedBy: string[] = [];
  for (const signature of parsed.signatures) {
    const verifier = verifiers.find((v) => v.name === signature.name && v.keyId.equals(signature.keyId));
    if (!verifier) continue;
    if (signature.signature.length !== 64 || !verify(null, message, verifier.publicKey, signature.signature)) {
      return {
        ok: false,
        reason: 'bad-signature',
        message: `the signature by ${verifier.name}+${verifier.keyId.toString('hex')} does not verify`,
      };
    }
    verifiedBy.push(`${verifier.name}+${verifier.keyId.toString('hex')}`);
  }
  if (verifiedBy.length === 0)
    return { ok: false, reason: 'no-known-signature', message: 'the note carries no signature from a known key' };
  return { ok: true, text: parsed.text, verifiedBy };
}

export interface Checkpoint {
  origin: string;
  size: number;
  /** The root hash line, decoded. */
  hash: Buffer;
  extensions: string[];
}

/** `<origin>\n<size>\n<base64 hash>\n`: the text of a tlog checkpoint. */
export function formatCheckpoint({ origin, size, hash }: Omit<Checkpoint, 'extensions'>): string {
  if (origin.length === 0 || origin.includes('\n') || FORBIDDEN_CONTROL.test(origin))
    throw new NoteFormatError('invalid origin');
  if (!Number.isSafeInteger(size) || size < 0) throw new NoteFormatError('the size must be a non-negative integer');
  return `${origin}\n${size}\n${hash.toString('base64')}\n`;
}

/** Parses a checkpoint text (a verified note's text); throws NoteFormatError when malformed. */
export function parseCheckpoint(text: string): Checkpoint {
  assertNoteText(text);
  const [origin = '', sizeLine = '', hashLine = '', ...extensions] = text.slice(0, -1).split('\n');
  if (origin.length === 0) throw new NoteFormatError('a checkpoint starts with a non-empty origin line');
  if (!/^(0|[1-9][0-9]*)$/.test(sizeLine) || !Number.isSafeInteger(Number(sizeLine))) {
    throw new NoteFormatError('the second line of a checkpoint is its size, in decimal without leading zeros');
  }
  const hash = decodeBase64(hashLine);
  if (!hash || hash.length === 0) throw new NoteFormatError('the third line of a checkpoint is its base64 hash');
  if (extensions.some((line) => line.length === 0))
    throw new NoteFormatError('checkpoint extension lines must be non-empty');
  return { origin, size: Number(sizeLine), hash, extensions };
}

function assertNoteText(text: string): void {
  if (text.length === 0 || !text.endsWith('\n'))
    throw new NoteFormatError('note text must be non-empty and end in a newline');
  if (FORBIDDEN_CONTROL.test(text))
    throw new NoteFormatError('note text must not contain control characters other than newline');
}

function decodeUtf8(bytes: Uint8Array): string {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    throw new NoteFormatError('a note must be valid UTF-8');
  }
}
