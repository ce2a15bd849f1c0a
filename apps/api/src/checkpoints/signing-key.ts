import { createPrivateKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  CHECKPOINT_KEY_NAME,
  decodeBase64,
  ed25519PrivateKeyFromSeed,
  formatVerifierKey,
  NoteVerifier,
  parseVerifierKey,
} from '@app/hashing';

export const SIGNING_KEY_FILE = 'checkpoint-signing-key';

/** The Ed25519 key that signs checkpoints, and its public half in signed-note form. */
export interface SigningKey {
  privateKey: KeyObject;
  /** `audit-trail+<hex key id>+<base64(0x01 || public key)>` */
  verifierKey: string;
  verifier: NoteVerifier;
  /** Where the key came from, for the log (never the key itself). */
  source: string;
}

/**
 * SIGNING_KEY is either the base64 (RFC 4648, padded) of the 32-byte Ed25519 seed, or a PKCS#8
 * PEM ("-----BEGIN PRIVATE KEY-----", what `openssl genpkey -algorithm ed25519` writes). The
 * error never repeats the value.
 */
export function parseSigningKey(text: string): KeyObject {
  const trimmed = text.trim();
  if (trimmed.startsWith('-----BEGIN')) {
    let key: KeyObject;
    try {
      key = createPrivateKey({ key: trimmed, format: 'pem' });
    } catch {
      throw new Error('SIGNING_KEY is not a readable PKCS#8 PEM private key');
    }
    if (key.asymmetricKeyType !== 'ed25519')
      throw new Error(`SIGNING_KEY must be an Ed25519 key, not ${key.asymmetricKeyType ?? 'unknown'}`);
    return key;
  }
  const seed = decodeBase64(trimmed);
  if (!seed || seed.length !== 32) {
    throw new Error(
      'SIGNING_KEY must be base64 of a 32-byte Ed25519 seed (e.g. `openssl rand -base64 32`) or a PKCS#8 PEM Ed25519 private key',
    );
  }
  return ed25519PrivateKeyFromSeed(seed);
}

export type KeyWarning = (message: string) => void;

/**
 * From SIGNING_KEY when set; else from SIGNING_KEY_FILE (`keyFile`), which must exist: a path that
 * names nothing is a mistake (a volume not mounted, a typo), and generating a key there would
 * silently replace the identity auditors trust; otherwise from <dataDir>/checkpoint-signing-key,
 * generated there once (mode 0600, created exclusively so that instances starting together agree
 * on one key; DATA_DIR created 0700).
 */
export function loadSigningKey(
  signingKey: string | null,
  dataDir: string,
  warn: KeyWarning,
  keyFile: string | null = null,
): SigningKey {
  if (signingKey) {
    if (keyFile) warn('SIGNING_KEY is set: SIGNING_KEY_FILE is ignored.');
    return toSigningKey(parseSigningKey(signingKey), 'SIGNING_KEY');
  }
  if (keyFile) {
    if (!existsSync(keyFile))
      throw new Error(
        `SIGNING_KEY_FILE ${keyFile} does not exist: create it (openssl genpkey -algorithm ed25519 -out ${keyFile}; chmod 600 ${keyFile}) or unset SIGNING_KEY_FILE`,
      );
    warnIfOpenToOthers(keyFile, warn);
    return toSigningKey(parseSigningKeyFile(readFileSync(keyFile, 'utf8'), keyFile), keyFile);
  }
  const path = join(dataDir, SIGNING_KEY_FILE);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
  try {
    writeFileSync(path, pem, { mode: 0o600, flag: 'wx' });
    warn(
      `SIGNING_KEY is not set: generated a checkpoint signing key in ${path} (mode 0600). ` +
        'Back it up and keep it away from the database and its backups (SIGNING_KEY_FILE); auditors trust its public key (GET /v1/checkpoint-key).',
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    warnIfOpenToOthers(path, warn);
  }
  return toSigningKey(parseSigningKeyFile(readFileSync(path, 'utf8'), path), path);
}

function warnIfOpenToOthers(path: string, warn: KeyWarning): void {
  if ((statSync(path).mode & 0o077) !== 0) warn(`${path} is readable by other users; it should be mode 0600.`);
}

function parseSigningKeyFile(text: string, path: string): KeyObject {
  try {
    return parseSigningKey(text);
  } catch (error) {
    throw new Error(`${path}: ${(error as Error).message.replace('SIGNING_KEY', 'the key file')}`);
  }
}

/**
 * RETIRED_VERIFIER_KEYS: the verifier keys (GET /v1/checkpoint-key) of earlier signing keys, so
 * that checkpoints they signed still verify after a rotation. Public keys only; a malformed one
 * stops the start.
 */
export function parseRetiredVerifierKeys(keys: readonly string[]): NoteVerifier[] {
  return keys.map((key, index) => {
    let verifier: NoteVerifier;
    try {
      verifier = parseVerifierKey(key);
    } catch (error) {
      throw new Error(`RETIRED_VERIFIER_KEYS entry ${index + 1}: ${(error as Error).message}`);
    }
    if (verifier.name !== CHECKPOINT_KEY_NAME)
      throw new Error(`RETIRED_VERIFIER_KEYS entry ${index + 1}: the key name must be ${CHECKPOINT_KEY_NAME}`);
    return verifier;
  });
}

function toSigningKey(privateKey: KeyObject, source: string): SigningKey {
  const verifierKey = formatVerifierKey(CHECKPOINT_KEY_NAME, privateKey);
  return { privateKey, verifierKey, verifier: parseVerifierKey(verifierKey), source };
}
