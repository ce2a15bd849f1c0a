import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CHECKPOINT_KEY_NAME, formatVerifierKey } from '@app/hashing';
import { loadSigningKey, parseRetiredVerifierKeys, parseSigningKey, SIGNING_KEY_FILE } from './signing-key';

const rawPublic = (pem: string | Buffer): string => createPublicKey(pem).export({ format: 'jwk' }).x as string;

describe('parseSigningKey', () => {
  const sut = parseSigningKey;

  it('reads base64 of a 32-byte seed (the RFC 8032 test 1 vector)', () => {
    // RFC 8032 §7.1 TEST 1: secret key 9d61b19d…7f60, public key d75a9801…511a.
    const seed = Buffer.from('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60', 'hex');
    const key = sut(seed.toString('base64'));
    expect(
      Buffer.from(rawPublic(createPublicKey(key).export({ format: 'pem', type: 'spki' })), 'base64url').toString('hex'),
    ).toBe('d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
  });

  it('reads a PKCS#8 PEM Ed25519 key', () => {
    const { privateKey, publicKey } = generateKeyPairSync('ed25519');
    const pem = privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    expect(rawPublic(createPublicKey(sut(`\n${pem}\n`)).export({ format: 'pem', type: 'spki' }))).toBe(
      publicKey.export({ format: 'jwk' }).x,
    );
  });

  it.each([
    ['a 31-byte seed', randomBytes(31).toString('base64')],
    ['hex instead of base64', randomBytes(32).toString('hex')],
    [
      'an RSA key',
      generateKeyPairSync('rsa', { modulusLength: 1024 })
        .privateKey.export({ format: 'pem', type: 'pkcs8' })
        .toString(),
    ],
    ['a broken PEM', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----'],
  ])('rejects %s without repeating it', (_label, text) => {
    let message = '';
    try {
      sut(text);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/SIGNING_KEY/);
    expect(message).not.toContain(text.slice(0, 20));
  });
});

describe('loadSigningKey', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'signing-key-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('uses SIGNING_KEY when set, and writes no file', () => {
    const warn = jest.fn<void, [string]>();
    const seed = randomBytes(32).toString('base64');
    const sut = loadSigningKey(seed, dir, warn);
    expect(sut.source).toBe('SIGNING_KEY');
    expect(sut.verifierKey).toMatch(/^audit-trail\+[0-9a-f]{8}\+/);
    expect(() => statSync(join(dir, SIGNING_KEY_FILE))).toThrow();
    expect(warn).not.toHaveBeenCalled();
  });

  it('generates a key file once, mode 0600, with a warning, and reuses it afterwards', () => {
    const warn = jest.fn<void, [string]>();
    const data = join(dir, 'nested', 'data');
    const first = loadSigningKey(null, data, warn);
    const path = join(data, SIGNING_KEY_FILE);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(data).mode & 0o777).toBe(0o700);
    expect(readFileSync(path, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0]![0]).toMatch(/SIGNING_KEY is not set: generated a checkpoint signing key/);
    const again = loadSigningKey(null, data, warn);
    expect(again.verifierKey).toBe(first.verifierKey);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('warns when an existing key file is readable by others', () => {
    const warn = jest.fn<void, [string]>();
    writeFileSync(join(dir, SIGNING_KEY_FILE), randomBytes(32).toString('base64'));
    chmodSync(join(dir, SIGNING_KEY_FILE), 0o644);
    loadSigningKey(null, dir, warn);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/readable by other users/));
  });

  it('refuses a corrupt key file rather than replacing it', () => {
    writeFileSync(join(dir, SIGNING_KEY_FILE), 'garbage', { mode: 0o600 });
    expect(() => loadSigningKey(null, dir, jest.fn())).toThrow(/checkpoint-signing-key: the key file must be base64/);
    expect(readFileSync(join(dir, SIGNING_KEY_FILE), 'utf8')).toBe('garbage');
  });
});

describe('loadSigningKey with SIGNING_KEY_FILE', () => {
  let dir: string;
  let data: string;
  let keyFile: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'signing-key-file-'));
    data = join(dir, 'data');
    keyFile = join(dir, 'secrets', 'checkpoint.pem');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const writeKey = (mode: number): string => {
    const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }).toString();
    mkdirSync(dirname(keyFile), { recursive: true });
    writeFileSync(keyFile, pem, { mode });
    return pem;
  };

  it('reads the key from that file and writes nothing into DATA_DIR', () => {
    const warn = jest.fn<void, [string]>();
    const pem = writeKey(0o600);
    const sut = loadSigningKey(null, data, warn, keyFile);
    expect(sut.source).toBe(keyFile);
    expect(sut.verifierKey).toBe(formatVerifierKey(CHECKPOINT_KEY_NAME, createPrivateKey(pem)));
    expect(existsSync(data)).toBe(false);
    expect(warn).not.toHaveBeenCalled();
  });

  it('stops the start when the file does not exist, and generates none (a new key would change the identity auditors trust)', () => {
    expect(() => loadSigningKey(null, data, jest.fn(), keyFile)).toThrow(
      /SIGNING_KEY_FILE .*checkpoint\.pem does not exist/,
    );
    expect(existsSync(keyFile)).toBe(false);
    expect(existsSync(join(data, SIGNING_KEY_FILE))).toBe(false);
  });

  it('warns when the file is readable by others, and refuses a corrupt one naming the file', () => {
    const warn = jest.fn<void, [string]>();
    writeKey(0o644);
    chmodSync(keyFile, 0o644);
    loadSigningKey(null, data, warn, keyFile);
    expect(warn).toHaveBeenCalledWith(expect.stringMatching(/checkpoint\.pem is readable by other users/));
    writeFileSync(keyFile, 'garbage');
    expect(() => loadSigningKey(null, data, jest.fn(), keyFile)).toThrow(
      /checkpoint\.pem: the key file must be base64/,
    );
  });

  it('gives way to SIGNING_KEY, with a warning', () => {
    const warn = jest.fn<void, [string]>();
    writeKey(0o600);
    const seed = randomBytes(32).toString('base64');
    const sut = loadSigningKey(seed, data, warn, keyFile);
    expect(sut.source).toBe('SIGNING_KEY');
    expect(sut.verifierKey).toBe(loadSigningKey(seed, data, jest.fn()).verifierKey);
    expect(warn).toHaveBeenCalledWith('SIGNING_KEY is set: SIGNING_KEY_FILE is ignored.');
  });
});

describe('parseRetiredVerifierKeys', () => {
  const key = () => formatVerifierKey(CHECKPOINT_KEY_NAME, generateKeyPairSync('ed25519').privateKey);

  it('reads verifier keys of the checkpoint key name', () => {
    const keys = [key(), key()];
    expect(parseRetiredVerifierKeys(keys).map((v) => `${v.name}+${v.keyId.toString('hex')}`)).toEqual(
      keys.map((k) => k.split('+').slice(0, 2).join('+')),
    );
  });

  it.each([
    ['garbage', 'not-a-key', /RETIRED_VERIFIER_KEYS entry 2: a verifier key is/],
    [
      'another name',
      formatVerifierKey('example.com', generateKeyPairSync('ed25519').privateKey),
      /RETIRED_VERIFIER_KEYS entry 2: the key name must be/,
    ],
    [
      'a wrong key id',
      key().replace(/\+[0-9a-f]{8}\+/, '+00000000+'),
      /RETIRED_VERIFIER_KEYS entry 2: the verifier key id does not match/,
    ],
  ])('stops the start on %s, naming the entry', (_, bad, message) => {
    expect(() => parseRetiredVerifierKeys([key(), bad])).toThrow(message);
  });
});
