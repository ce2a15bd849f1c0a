import { generateKeyPairSync } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatVerifierKey } from '@app/hashing';
import { StateFileError, StateStore } from './state-store';
import { ConfigError, parseLogs, witnessConfigFrom } from './witness-config';
import { loadOrCreateKey } from './witness-key';

describe('the witness files', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'witness-files-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  describe('StateStore', () => {
    const hash = (byte: number): Buffer => Buffer.alloc(32, byte);

    it('writes every change before put() resolves, leaving no temporary file', async () => {
      const file = join(dir, 'state.json');
      const sut = await StateStore.open(file);
      await Promise.all([sut.put('a', { size: 1, hash: hash(1) }), sut.put('b', { size: 2, hash: hash(2) })]);
      await sut.put('a', { size: 3, hash: hash(3) });
      const reopened = await StateStore.open(file);
      expect(reopened.get('a')).toEqual({ size: 3, hash: hash(3) });
      expect(reopened.get('b')).toEqual({ size: 2, hash: hash(2) });
      expect(reopened.get('c')).toBeNull();
      expect(await readdir(dir)).toEqual(['state.json']);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
    });

    it('keeps the last record when a write fails', async () => {
      const sut = await StateStore.open(join(dir, 'gone', 'state.json'));
      await rm(join(dir, 'gone'), { recursive: true });
      await expect(sut.put('a', { size: 1, hash: hash(1) })).rejects.toThrow();
      expect(sut.get('a')).toBeNull();
    });

    it.each([
      ['not JSON', '{'],
      ['another version', '{"version":2,"logs":{}}'],
      ['a bad size', '{"version":1,"logs":{"a":{"size":-1,"hash":"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="}}}'],
      ['a short hash', '{"version":1,"logs":{"a":{"size":1,"hash":"AAAA"}}}'],
    ])('refuses to start from a state file with %s', async (_what, text) => {
      const file = join(dir, 'state.json');
      await writeFile(file, text);
      await expect(StateStore.open(file)).rejects.toThrow(StateFileError);
    });
  });

  describe('loadOrCreateKey', () => {
    it('makes a 0600 PKCS#8 Ed25519 key once and reads it back', async () => {
      const file = join(dir, 'keys', 'witness.pem');
      const made = await loadOrCreateKey(file);
      expect(made.created).toBe(true);
      expect((await stat(file)).mode & 0o777).toBe(0o600);
      expect(await readFile(file, 'utf8')).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      const read = await loadOrCreateKey(file);
      expect(read).toMatchObject({ created: false });
      expect(read.privateKey.equals(made.privateKey)).toBe(true);
    });

    it('refuses a key that is not Ed25519', async () => {
      const file = join(dir, 'ec.pem');
      const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
      await writeFile(file, privateKey.export({ format: 'pem', type: 'pkcs8' }), { mode: 0o600 });
      await expect(loadOrCreateKey(file)).rejects.toThrow(ConfigError);
    });
  });

  describe('configuration', () => {
    const vkey = formatVerifierKey('audit-trail', generateKeyPairSync('ed25519').privateKey);
    const logs = JSON.stringify([{ origin: 'audit-trail/checkpoint-log', keys: [vkey] }]);

    it('reads the environment with its defaults', () => {
      const sut = witnessConfigFrom({ WITNESS_NAME: 'w.example/1', WITNESS_LOGS: logs });
      expect(sut).toMatchObject({ name: 'w.example/1', host: '127.0.0.1', port: 7380 });
      expect(sut.logs.get('audit-trail/checkpoint-log')?.verifiers).toHaveLength(1);
    });

    it.each([
      ['no name', { WITNESS_LOGS: logs }],
      ['no logs', { WITNESS_NAME: 'w' }],
      ['a bad port', { WITNESS_NAME: 'w', WITNESS_LOGS: logs, PORT: '70000' }],
    ])('stops on %s', (_what, env) => {
      expect(() => witnessConfigFrom(env)).toThrow(ConfigError);
    });

    it.each([
      ['not JSON', 'audit-trail'],
      ['no keys', '[{"origin":"o","keys":[]}]'],
      ['a bad key', '[{"origin":"o","keys":["o+00000000+AAAA"]}]'],
      ['an origin twice', `[${logs.slice(1, -1)},${logs.slice(1, -1)}]`],
    ])('refuses WITNESS_LOGS with %s', (_what, text) => {
      expect(() => parseLogs(text)).toThrow(ConfigError);
    });
  });
});
