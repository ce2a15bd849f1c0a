import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CHECKPOINT_KEY_NAME,
  computeEventHash,
  eventLeafHash,
  formatVerifierKey,
  GENESIS_HASH,
  merkleRoot,
  signChainCheckpoint,
} from '@app/hashing';
import { like } from '@app/common/testing/like.fixture';
import { run } from './cli';

const CHAIN = 'chn_01JDQ8Z5WZ2M7K4N9P3R6T0V1X';

async function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await run(args, { out: (s) => (out += s), err: (s) => (err += s), env });
  return { code, out, err };
}

describe('cli', () => {
  let dir: string;
  const { privateKey } = generateKeyPairSync('ed25519');
  const vkey = formatVerifierKey(CHECKPOINT_KEY_NAME, privateKey);
  const event = {
    id: 'evt_01JDQ8Z5X3N4K7M2P9R6T0V1WA',
    timestamp: '2026-11-22T07:24:53.449Z',
    actor: 'a',
    action: 'b',
    resource: null,
    context: null,
    chain: { id: CHAIN, name: 'default', position: 1 },
    previousHash: GENESIS_HASH,
    hash: '',
  };
  event.hash = computeEventHash({ ...event, chainId: CHAIN, position: 1 });

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'cli-spec-'));
    writeFileSync(
      join(dir, 'export.json'),
      JSON.stringify({
        export: { format: 'json', filters: { actor: null, action: null, resource: null, chain_id: null }, count: 1 },
        data: [event],
      }),
    );
    writeFileSync(
      join(dir, 'cp.txt'),
      signChainCheckpoint(
        { chainId: CHAIN, size: 1, hash: merkleRoot([eventLeafHash(event.hash)]).toString('hex') },
        privateKey,
      ),
    );
    writeFileSync(join(dir, 'key.txt'), `${vkey}\n`);
    writeFileSync(join(dir, 'broken.json'), '{"data": [');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('verifies an export against a checkpoint with the key inline or from a file (exit 0)', async () => {
    const inline = await cli([
      'verify-export',
      join(dir, 'export.json'),
      '--checkpoint',
      join(dir, 'cp.txt'),
      '--key',
      vkey,
    ]);
    expect(inline).toMatchObject({ code: 0, err: '' });
    expect(inline.out).toMatch(/CONFIRMED[\s\S]*RESULT: VERIFIED/);
    expect(
      (
        await cli([
          'verify-export',
          join(dir, 'export.json'),
          '--checkpoint',
          join(dir, 'cp.txt'),
          '--key',
          join(dir, 'key.txt'),
        ])
      ).code,
    ).toBe(0);
  });

  it('says NOT CONFIRMED and exits 1 without a checkpoint; --internal-only exits 0 and says no signature was checked', async () => {
    const bare = await cli(['verify-export', join(dir, 'export.json')]);
    expect(bare.code).toBe(1);
    expect(bare.out).toMatch(/position 1 NOT CONFIRMED: no checkpoint was given[\s\S]*RESULT: NOT CONFIRMED/);
    expect(bare.out).not.toMatch(/RESULT: VERIFIED/);
    const keyOnly = await cli(['verify-export', join(dir, 'export.json'), '--key', vkey]);
    expect(keyOnly.code).toBe(1);
    const internal = await cli(['verify-export', join(dir, 'export.json'), '--internal-only']);
    expect(internal).toMatchObject({ code: 0, err: '' });
    expect(internal.out).toMatch(/RESULT: CONSISTENT: .*No signature was checked/);
  });

  it('escapes control characters from the file on stdout and stderr', async () => {
    const named = { ...event, chain: { ...event.chain, name: 'default\u001b[8m' } };
    named.hash = computeEventHash({ ...named, chainId: CHAIN, position: 1 });
    writeFileSync(join(dir, 'esc.json'), JSON.stringify({ data: [named] }));
    const result = await cli(['verify-export', join(dir, 'esc.json'), '--internal-only']);
    expect(result.code).toBe(0);
    expect(result.out).toContain("'default\\u001b[8m'");
    expect(result.out).not.toContain('\u001b');
    writeFileSync(join(dir, 'esc-bad.json'), JSON.stringify({ data: [{ ...named, id: 'evt_\u001b[8m', hash: 'x' }] }));
    const bad = await cli(['verify-export', join(dir, 'esc-bad.json'), '--internal-only']);
    expect(bad.code).toBe(2);
    expect(bad.err).toContain('evt_\\u001b[8m');
    expect(bad.err).not.toContain('\u001b');
  });

  it.each([
    ['no command', []],
    ['an unknown command', ['frobnicate']],
    ['an unknown option', ['verify-export', 'x.json', '--nope']],
    ['two export files', ['verify-export', 'a.json', 'b.json']],
    ['a missing export file', ['verify-export', '/nonexistent/export.json']],
    ['an export that is not JSON', ['verify-export', '@broken']],
    ['a checkpoint without --key', ['verify-export', '@export', '--checkpoint', '@cp']],
    ['a malformed key', ['verify-export', '@export', '--checkpoint', '@cp', '--key', 'audit-trail+zz']],
    ['--internal-only with a checkpoint', ['verify-export', '@export', '--internal-only', '--checkpoint', '@cp']],
    ['--internal-only with a key', ['verify-export', '@export', '--internal-only', '--key', 'audit-trail+zz']],
    ['keys without DATABASE_URL', ['keys', 'list', '--account', 'acme']],
  ])('exits 2 for %s', async (_label, args) => {
    const resolved = args.map((a) =>
      a === '@broken'
        ? join(dir, 'broken.json')
        : a === '@export'
          ? join(dir, 'export.json')
          : a === '@cp'
            ? join(dir, 'cp.txt')
            : a,
    );
    const result = await cli(resolved);
    expect(result.code).toBe(2);
    expect(result.err).not.toBe('');
  });

  it('prints usage for help (exit 0)', async () => {
    expect(await cli(['help'])).toMatchObject({ code: 0, out: like.stringMatching(/verify-export <export.json>/) });
  });
});
