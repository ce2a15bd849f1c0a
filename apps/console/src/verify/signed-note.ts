import { concat, equalBytes, fromBase64, sha256, toHex, utf8 } from './bytes';

/*
 * C2SP signed notes with Ed25519 (c2sp.org/signed-note) and tlog checkpoints
 * (c2sp.org/tlog-checkpoint), checked with Web Crypto:
 *   note      = text "\n" signature-line+, each "— <key name> base64(key id[4] || signature[64])"
 *   vkey      = <name>+<hex key id>+base64(0x01 || public key[32])
 *   key id    = SHA-256(name || 0x0A || 0x01 || public key)[:4]
 *   text      = origin "\n" size "\n" base64(root) "\n" (extension lines)
 */
const ED25519 = 0x01;
const EM_DASH = '\u2014 ';

export interface VerifierKey {
  name: string;
  keyId: Uint8Array;
  publicKey: Uint8Array;
}

export interface Checkpoint {
  origin: string;
  size: number;
  root: Uint8Array;
}

export class NoteError extends Error {}

export async function parseVerifierKey(text: string): Promise<VerifierKey> {
  const match = /^([^+\s]+)\+([0-9a-f]{8})\+(\S+)$/.exec(text.trim());
  if (!match) throw new NoteError('the verifier key is not <name>+<key id>+<key>');
  const [, name = '', idHex = '', keyText = ''] = match;
  const typed = fromBase64(keyText);
  if (!typed || typed.length !== 33 || typed[0] !== ED25519)
    throw new NoteError('the verifier key is not an Ed25519 key');
  const publicKey = typed.slice(1);
  const keyId = (await sha256(utf8(name), new Uint8Array([0x0a, ED25519]), publicKey)).slice(0, 4);
  if (toHex(keyId) !== idHex) throw new NoteError('the verifier key’s id does not match its key');
  return { name, keyId, publicKey };
}

/**
 * The text of a signed note once a signature by `key` over it verifies (Ed25519, Web Crypto);
 * signatures by other keys are ignored. Throws NoteError naming what failed.
 */
export async function verifySignedNote(note: string, key: VerifierKey): Promise<string> {
  const split = note.lastIndexOf('\n\n');
  if (split < 0 || !note.endsWith('\n')) throw new NoteError('the checkpoint is not a signed note');
  const text = note.slice(0, split + 1);
  const lines = note.slice(split + 2, -1).split('\n');
  let signature: Uint8Array | null = null;
  for (const line of lines) {
    if (!line.startsWith(EM_DASH)) throw new NoteError('the checkpoint has a malformed signature line');
    const rest = line.slice(EM_DASH.length);
    const space = rest.lastIndexOf(' ');
    const blob = fromBase64(rest.slice(space + 1));
    if (space <= 0 || !blob || blob.length < 5) throw new NoteError('the checkpoint has a malformed signature line');
    if (rest.slice(0, space) === key.name && equalBytes(blob.slice(0, 4), key.keyId)) signature = blob.slice(4);
  }
  if (signature === null) throw new NoteError('the checkpoint carries no signature by the verifier key');
  const publicKey = await crypto.subtle.importKey('raw', concat(key.publicKey), { name: 'Ed25519' }, false, ['verify']);
  const valid =
    signature.length === 64 &&
    (await crypto.subtle.verify({ name: 'Ed25519' }, publicKey, concat(signature), concat(utf8(text))));
  if (!valid) throw new NoteError('the checkpoint’s Ed25519 signature does not verify');
  return text;
}

/** A tlog checkpoint's text: origin, size, base64 root (extension lines ignored). */
export function parseCheckpointText(text: string): Checkpoint {
  const [origin = '', sizeLine = '', rootLine = ''] = text.slice(0, -1).split('\n');
  const root = fromBase64(rootLine);
  if (origin === '' || !/^(0|[1-9][0-9]*)$/.test(sizeLine) || !Number.isSafeInteger(Number(sizeLine)) || !root)
    throw new NoteError('the checkpoint’s text is not origin, size and root');
  return { origin, size: Number(sizeLine), root };
}
