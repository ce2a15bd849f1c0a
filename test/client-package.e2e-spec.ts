import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * docs/contract.md §20: `npm pack` in libs/client after its build gives a tarball that installs into an
 * empty project (no dependency to fetch: --offline) and is imported as @audit-trail/client from ESM
 * and CommonJS, with types that a strict TypeScript program compiles against, and nothing of the
 * service's code imported at run time (build.mjs refuses a bundle that imports anything but node:).
 */
describe('the client library as a package', () => {
  const dir = mkdtempSync(join(tmpdir(), 'client-package-'));
  const root = join(__dirname, '..');
  const run = (command: string, args: string[], cwd: string) =>
    execFileSync(command, args, {
      cwd,
      stdio: 'pipe',
      encoding: 'utf8',
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('packs, installs into an empty project, and imports from ESM, CommonJS and TypeScript; its command runs', () => {
    run('npm', ['pack', '--pack-destination', dir], join(root, 'libs', 'client'));
    const tarball = readdirSync(dir).find((f) => f.endsWith('.tgz'))!;
    const project = join(dir, 'project');
    run('mkdir', [project], dir);
    writeFileSync(join(project, 'package.json'), '{ "name": "empty", "version": "1.0.0", "private": true }\n');
    run('npm', ['install', '--offline', '--no-audit', '--no-fund', join(dir, tarball)], project);
    writeFileSync(
      join(project, 'esm.mjs'),
      `import { AuditTrailClient, AuditTrailError } from '@audit-trail/client';
const client = new AuditTrailClient({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k' });
try { await client.events.get('evt_x'); } catch (e) { console.log(e instanceof AuditTrailError, e.code); }\n`,
    );
    writeFileSync(
      join(project, 'cjs.cjs'),
      `const { AuditTrailClient } = require('@audit-trail/client');
console.log(typeof new AuditTrailClient({ baseUrl: 'http://x', apiKey: 'k' }).recorder);\n`,
    );
    writeFileSync(
      join(project, 'typed.mts'),
      `import { AuditTrailClient, type AuditEvent, type Receipt } from '@audit-trail/client';
const client = new AuditTrailClient({ baseUrl: 'http://x', apiKey: 'k' });
export async function first(): Promise<AuditEvent | undefined> { for await (const e of client.events.list({ actor: 'a' })) return e; }
export const receipt: Receipt = { id: 'evt_x', chainId: 'chn_x', position: 1, hash: '0'.repeat(64) };
// @ts-expect-error: the filters are the route's
client.events.list({ actr: 'a' });
// What the file of \`audit-trail-client types\` declares (contract §20): record() follows the enforced schema.
declare module '@audit-trail/client' {
  interface ActionSchemas {
    'invoice.*': { mode: 'enforce'; version: 1; actor: string; resource: string | null; context: { amount: number } };
  }
}
const recorder = client.recorder();
export const good = recorder.record({ actor: 'a', action: 'invoice.approve', context: { amount: 1 } });
// @ts-expect-error: amount is a number under the enforced schema of invoice.*
export const bad = recorder.record({ actor: 'a', action: 'invoice.approve', context: { amount: 'x' } });\n`,
    );
    // The package's command (bin), as npx runs it.
    expect(run(join(project, 'node_modules', '.bin', 'audit-trail-client'), ['--help'], project)).toMatch(
      /^Usage: audit-trail-client types --base-url <url>/,
    );
    expect(run(process.execPath, ['esm.mjs'], project)).toBe('true NETWORK_ERROR\n');
    expect(run(process.execPath, ['cjs.cjs'], project)).toBe('function\n');
    // The NestJS entry takes @nestjs/common, @nestjs/core and rxjs from the application (here the repository's).
    writeFileSync(
      join(project, 'nestjs.cjs'),
      `require('reflect-metadata');
const { AuditTrailClient } = require('@audit-trail/client');
const { AuditTrailModule } = require('@audit-trail/client/nestjs');
const dynamic = AuditTrailModule.forRoot({ baseUrl: 'http://x', apiKey: 'k' });
console.log(dynamic.providers.some((p) => p.provide === AuditTrailClient));\n`,
    );
    const withNest = { ...process.env, NODE_PATH: join(root, 'node_modules') };
    expect(execFileSync(process.execPath, ['nestjs.cjs'], { cwd: project, env: withNest, encoding: 'utf8' })).toBe(
      'true\n',
    );
    const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
    const types = join(root, 'node_modules', '@types');
    const flags = ['--noEmit', '--strict', '--module', 'node16', '--moduleResolution', 'node16', '--target', 'es2022'];
    run(process.execPath, [tsc, ...flags, '--types', 'node', '--typeRoots', types, 'typed.mts'], project);
  }, 120_000);
});
