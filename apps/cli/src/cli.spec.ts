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

  it.each([
    ['no command', []],
    ['an unknown command', ['frobnicate']],
    ['an unknown option', ['verify-export', 'x.json', '--nope']],
    ['two export files', ['verify-export', 'a.json', 'b.json']],
    ['a missing export file', ['verify-export', '/nonexistent/export.json']],
    ['an export that is not JSON', ['verify-export', '@broken']],
    ['a checkpoint without --key', ['verify-export', '@export', '--checkpoint', '@cp']],
    ['a malformed key', ['verify-export', '@export', '--checkpoint', '@cp', '--key', 'audit-trail+zz']],
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
    expect(await cli(['help'])).toMatchObject({ code: 0, out: expect.stringMatching(/verify-export <export.json>/) });
  });
});
