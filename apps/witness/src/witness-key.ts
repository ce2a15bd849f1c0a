import { createPrivateKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { mkdir, open, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { ConfigError } from './witness-config';

export interface LoadedKey {
  privateKey: KeyObject;
  /** True when the file did not exist and was made now. */
  created: boolean;
  /** Set when the file is readable by others than its owner. */
  warning?: string;
}

/**
 * The witness's Ed25519 key from a PKCS#8 PEM file, made (mode 0600, never overwriting) when
 * the file does not exist. Losing it retires the witness: a new key is a new witness.
 */
export async function loadOrCreateKey(file: string): Promise<LoadedKey> {
  const pem = await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw new ConfigError(`cannot read WITNESS_KEY_FILE ${file}: ${error.message}`);
  });
  if (pem === null) return { privateKey: await createKeyFile(file), created: true };
  let privateKey: KeyObject;
  try {
    privateKey = createPrivateKey(pem);
  } catch {
    throw new ConfigError(`WITNESS_KEY_FILE ${file} is not a PEM private key`);
  }
  if (privateKey.asymmetricKeyType !== 'ed25519')
    throw new ConfigError(`WITNESS_KEY_FILE ${file} holds a ${privateKey.asymmetricKeyType} key, not Ed25519`);
  const { mode } = await stat(file);
  const warning =
    (mode & 0o077) !== 0 ? `${file} is readable by others (mode ${(mode & 0o777).toString(8)})` : undefined;
  return { privateKey, created: false, ...(warning ? { warning } : {}) };
}

async function createKeyFile(file: string): Promise<KeyObject> {
  const { privateKey } = generateKeyPairSync('ed25519');
  await mkdir(dirname(file), { recursive: true, mode: 0o700 });
  // 'wx': fails if another process made the file meanwhile, rather than replacing its key.
  const handle = await open(file, 'wx', 0o600);
  try {
    await handle.writeFile(privateKey.export({ format: 'pem', type: 'pkcs8' }));
    await handle.sync();
  } finally {
    await handle.close();
  }
  return privateKey;
}
